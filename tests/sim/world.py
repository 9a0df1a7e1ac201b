# ruff: noqa: E501  (the year is data: one fact a line reads best)
"""One user's year, scripted and seeded: what they say each day and what they later need to know.

Pure data: no memtiers calls here. `year.py` plays it against the real memory.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from tiers.records import Kind


@dataclass(frozen=True)
class Said:
    """One memory the agent stores, with the hints a capable agent gives."""

    content: str
    category: str  # identity, preference, critical, decision, meeting, chitchat, task
    kind: Kind | None = None
    key: str | None = None
    forget_after: str | None = None


@dataclass(frozen=True)
class Ask:
    """One turn that recalls: the query, and the text the answer needs (None: no single right answer)."""

    query: str
    category: str
    needle: str | None = None


@dataclass
class Day:
    number: int
    said: list[Said] = field(default_factory=list)
    asks: list[Ask] = field(default_factory=list)
    profile_sets: dict[str, str] = field(default_factory=dict)
    forgets: list[str] = field(default_factory=list)  # contents said earlier that the user asks to forget


# key: [(day, what the user says, the word that shows the value)], the last one current at the end
PREFERENCES: dict[str, list[tuple[int, str, str]]] = {
    "answer_style": [
        (1, "I prefer short answers without preamble", "short answers"),
        (220, "I'd rather get detailed answers with examples now", "detailed answers"),
    ],
    "diet": [(2, "I'm vegetarian", "vegetarian"), (150, "I'm vegan now, no dairy or eggs either", "vegan")],
    "editor": [
        (3, "I prefer vim for editing code", "vim"),
        (95, "I switched to VS Code as my main editor", "VS Code"),
        (280, "I now prefer Helix as my editor", "Helix"),
    ],
    "coffee": [
        (4, "My favourite coffee is a flat white", "flat white"),
        (60, "I prefer a double espresso now", "espresso"),
    ],
    "meetings": [(6, "I prefer meetings in the morning", "morning"), (170, "I prefer meetings after 2pm now", "2pm")],
    "code_language": [(8, "I prefer Python for scripts", "Python"), (240, "I prefer Rust for new tools now", "Rust")],
    "theme": [(10, "I like dark mode in every app", "dark mode")],
    "music": [(12, "I like lo-fi music while I work", "lo-fi")],
    "units": [(14, "I prefer metric units", "metric")],
    "seat": [(20, "I prefer aisle seats when flying", "aisle")],
}
PREFERENCE_ASKS = {
    "answer_style": "how long should your answers to me be?",
    "diet": "suggest a lunch place near the office that fits my diet",
    "editor": "which editor do I use for code?",
    "coffee": "order my usual coffee",
    "meetings": "when should I schedule the sync with the design team?",
    "code_language": "which language should this new script be in?",
    "theme": "should the dashboard default to light or dark mode for me?",
    "music": "put on some music for focus",
    "units": "how far is the run, in my units?",
    "seat": "book my seat on the flight to Madrid",
}
IDENTITY: list[tuple[int, str, str | None, str, str]] = [
    # day, content, agent's key (None: the server's rules find it), query, needle
    (0, "My name is Ana Ruiz", None, "what is my name?", "Ana Ruiz"),
    (0, "I work at Fjord Analytics as a data engineer", "job", "where do I work?", "Fjord Analytics"),
    (1, "I live in Lisbon", "city", "which city do I live in?", "Lisbon"),
    (200, "I moved to Berlin last week", "city", "which city do I live in?", "Berlin"),
]
# Critical facts said once: day, content, the agent's kind hint (None: the server's rules must catch it), a
# situation that needs the fact (asked during the year), the text that shows it, and the agent's direct lookup
# of it (asked at the end of the year)
CRITICAL: list[tuple[int, str, Kind | None, str, str, str]] = [
    (9, "I'm allergic to peanuts, even traces", None, "any food allergies to watch for at the team dinner?", "peanuts", "what is the user allergic to?"),
    (17, "I have type 1 diabetes, so meals need to be on time", Kind.HEALTH, "anything to plan lunch around for my health?", "diabetes", "what health conditions does the user have?"),
    (25, "Never schedule calls on Sundays", None, "can I put a call with the client on Sunday?", "Sundays", "when must calls never be scheduled?"),
    (33, "My daughter Lea's birthday is on March 3", None, "when is Lea's birthday?", "March 3", "when is my daughter's birthday?"),
    (41, "My blood type is O negative", None, "what is my blood type?", "O negative", "what is the user's blood type?"),
    (48, "Don't ever share my personal phone number with recruiters", None, "can I give my phone number to the recruiter?", "phone number", "rules about sharing my phone number"),
    (56, "I take warfarin, so ibuprofen is off limits for me", Kind.HEALTH, "can I take ibuprofen for this headache?", "warfarin", "which medication does the user take?"),
    (64, "My wife Marta works night shifts at the hospital", None, "when does Marta work?", "night shifts", "what is my wife's work schedule?"),
    (73, "I can't drink alcohol, I'm in recovery", None, "should I order wine for the client dinner?", "alcohol", "can the user drink alcohol?"),
    (81, "My passport expires in June 2029", Kind.IDENTITY, "when does my passport expire?", "2029", "when does my passport expire?"),
    (90, "I'm afraid of flying, so trains whenever possible", Kind.PREFERENCE, "how should I travel to the Madrid offsite?", "trains", "how does the user like to travel?"),
    (99, "My manager is Tomasz Nowak", None, "who is my manager?", "Tomasz", "who is my manager?"),
    (108, "I'm celiac, so no gluten at all", None, "can I eat the sourdough sandwiches?", "gluten", "which foods can the user not eat?"),
    (117, "Always cc Priya on emails about the budget", None, "who should I cc on the budget email?", "Priya", "who should be cc'd on budget emails?"),
    (126, "My son Tiago has a severe bee sting allergy; his EpiPen is in the blue bag", None, "where is Tiago's EpiPen?", "blue bag", "where is Tiago's EpiPen?"),
    (140, "I'm hard of hearing in my left ear", Kind.HEALTH, "where should I sit in the meeting room?", "left ear", "does the user have trouble hearing?"),
    (152, "Never deploy on Fridays", None, "is it ok to deploy the release on Friday?", "Fridays", "on which days are deploys not allowed?"),
    (165, "My brother Joao is my emergency contact", None, "who is my emergency contact?", "Joao", "who is my emergency contact?"),
    (178, "I'm lactose intolerant", None, "can I have the cheese platter?", "lactose", "is the user intolerant to any food?"),
    (196, "Do not book me on flights before 8am", None, "which flight should I book to Berlin?", "8am", "which flight times must I avoid?"),
    (214, "My cat Miso needs her thyroid pill at 8pm", None, "when does Miso get her pill?", "8pm", "what medicine does the cat need?"),
    (233, "I don't eat pork", Kind.CONSTRAINT, "what should we cater for the team lunch?", "pork", "what meat does the user not eat?"),
    (251, "My mother has dementia, so calls with her must stay short and calm", None, "how should calls with my mother go?", "dementia", "what should I know about my mother?"),
    (270, "Under no circumstances send invoices to the old billing address in Porto", None, "where should invoices not go?", "Porto", "where must invoices never be sent?"),
    (300, "I have epilepsy; flashing lights can trigger seizures", None, "is the strobe light demo ok for me?", "epilepsy", "what medical conditions does the user have?"),
    (330, "My partner Sam is allergic to cats", None, "can Sam come over to meet the cat?", "allergic to cats", "what is my partner allergic to?"),
]  # fmt: skip
PROJECTS = {
    # name: (first day, last day, {topic: [choices, the later ones replacing the earlier]})
    "billing": (
        0,
        150,
        {
            "database": ["Postgres", "CockroachDB"],
            "queue": ["RabbitMQ"],
            "invoice format": ["PDF/A-3 with embedded XML"],
            "currency rounding": ["banker's rounding"],
            "auth": ["OAuth2 client credentials"],
            "deploy target": ["Kubernetes on GKE", "Cloud Run"],
            "ledger storage": ["append-only event table"],
            "retries": ["exponential backoff capped at 10 minutes"],
        },
    ),
    "search": (
        110,
        270,
        {
            "index": ["Tantivy", "OpenSearch"],
            "embedding model": ["MiniLM"],
            "ranking": ["reciprocal rank fusion"],
            "language": ["Rust"],
            "cache": ["Redis with a 5 minute TTL"],
            "query parser": ["a hand-written Pratt parser"],
            "evaluation set": ["500 labelled queries from support tickets"],
            "sharding": ["by tenant id"],
        },
    ),
    "mobile": (
        240,
        365,
        {
            "framework": ["React Native", "Flutter"],
            "state management": ["Riverpod"],
            "offline sync": ["CRDTs via Automerge"],
            "push provider": ["Firebase Cloud Messaging"],
            "release cadence": ["every two weeks"],
            "analytics": ["PostHog self-hosted"],
            "min OS": ["iOS 16 and Android 10"],
            "design system": ["Material 3 with our own tokens"],
        },
    ),
}
PEOPLE = ["Priya", "Tomasz", "Lena", "Kofi", "Mei", "Rafael", "Ines", "Dario"]
FEELINGS = ["tired", "in a great mood", "a bit stressed", "relaxed", "sleepy", "energised", "distracted", "cheerful"]
WEATHER = ["rainy", "sunny", "windy", "foggy", "cold", "hot", "grey", "stormy"]
SHOWS = ["Severance", "The Bear", "Dark", "Shogun", "Slow Horses", "Andor", "Succession", "Fleabag"]
FOODS = ["ramen", "a falafel wrap", "pasta", "a big salad", "leftover curry", "tacos", "a bowl of pho", "soup"]
ERRANDS = ["renew the car insurance", "send the expense report", "book the dentist", "call the landlord",
           "pay the electricity bill", "buy a birthday present", "return the library books"]  # fmt: skip
AREAS = ["API", "importer", "dashboard", "CI pipeline", "test suite", "data model", "docs", "alerting", "CLI"]
SMALL_TALK = ["Thanks, that worked!", "Good morning!", "ok perfect", "haha nice"]  # the few an agent stores verbatim


def _chitchat(rng: random.Random, day: int) -> str:
    city = "Lisbon" if day < 200 else "Berlin"
    templates = [
        lambda: f"User said the weather in {city} is {rng.choice(WEATHER)} today (day {day})",
        lambda: f"User is feeling {rng.choice(FEELINGS)} today, day {day}",
        lambda: f"User watched an episode of {rng.choice(SHOWS)} last night (day {day})",
        lambda: f"User had {rng.choice(FOODS)} for lunch on day {day}",
        lambda: f"User mentioned {rng.choice(PEOPLE)} brought cake to the office on day {day}",
        lambda: f"User joked that the coffee machine broke again, day {day}",
        lambda: rng.choice(SMALL_TALK),
    ]
    return rng.choice(templates)()


def _worklog(project: str, day: int, rng: random.Random) -> str:
    area = rng.choice(AREAS)
    return rng.choice(
        [
            f"Reviewed pull request #{rng.randint(100, 999)} on the {project} {area} (day {day})",
            f"Fixed a flaky test in the {project} {area} on day {day}",
            f"Paired with {rng.choice(PEOPLE)} on the {project} {area}, day {day}",
            f"The {project} {area} build took {rng.randint(4, 40)} minutes today, day {day}",
        ]
    )


def _decision(project: str, topic: str, choice: str, day: int, changed: bool, rng: random.Random) -> str:
    reason = rng.choice(["after the spike", "after a long discussion", "because the team knows it", "for cost reasons"])
    if changed:
        return f"For the {project} project we switched {topic} to {choice} {reason} (day {day})"
    return f"For the {project} project we decided to use {choice} for {topic} {reason} (day {day})"


def _meeting(project: str, decided: dict[str, str], day: int, rng: random.Random) -> str:
    people = ", ".join(rng.sample(PEOPLE, 3))
    topics = rng.sample(sorted(decided), min(2, len(decided))) if decided else []
    lines = [f"Meeting notes, {project} sync on day {day}. Attendees: Ana, {people}."]
    for topic in topics:
        lines.append(f"Discussed {topic}: staying with {decided[topic]} for now; {rng.choice(PEOPLE)} to write it up.")
    lines.append(
        f"Action items: {rng.choice(PEOPLE)} reviews the open pull requests, {rng.choice(PEOPLE)} updates the "
        f"roadmap, Ana checks the {rng.choice(['metrics', 'budget', 'incident log', 'test plan'])} before Friday."
    )
    return " ".join(lines)


def script(days: int = 365, seed: int = 20261130, asks_per_day: int = 4) -> list[Day]:
    """The user's year: `days` days, deterministic for a seed."""
    rng = random.Random(seed)
    out = [Day(n) for n in range(days)]
    current: dict[str, tuple[str, str]] = {}  # preference key -> (content, needle) as of the day being written

    for key, changes in PREFERENCES.items():
        for index, (when, content, _) in enumerate(changes):
            if when < days:
                hint = Kind.PREFERENCE if rng.random() < 0.5 else None
                out[when].said.append(Said(content, "preference", kind=hint, key=key))
                # said again now and then, word for word, until the next change
                until = min(changes[index + 1][0] if index + 1 < len(changes) else days, days)
                for again in range(when + rng.randint(25, 50), until, rng.randint(35, 70)):
                    out[again].said.append(Said(content, "preference", key=key))
    for when, content, identity_key, _, _ in IDENTITY:
        if when < days:
            out[when].said.append(Said(content, "identity", key=identity_key))
    for when, content, hint, *_ in CRITICAL:
        if when < days:
            out[when].said.append(Said(content, "critical", kind=hint))

    decided: dict[str, dict[str, str]] = {p: {} for p in PROJECTS}
    schedule: dict[int, list[tuple[str, str, str, bool]]] = {}
    for project, (first, last, topics) in PROJECTS.items():
        if first >= days:
            continue
        if first > 0 or project == "billing":
            out[first].profile_sets["current_project"] = project
        span = min(last, days) - first
        for topic, choices in topics.items():
            when = first + rng.randrange(max(1, span // 2))
            schedule.setdefault(when, []).append((project, topic, choices[0], False))
            if len(choices) > 1:
                later = when + rng.randint(20, max(21, span // 2))
                if later < min(last, days):
                    schedule.setdefault(later, []).append((project, topic, choices[1], True))

    forget_later: list[tuple[int, str]] = []
    for day in out:
        n = day.number
        weekday = n % 7 < 5
        active = [p for p, (first, last, _) in PROJECTS.items() if first <= n <= last]
        for project, topic, choice, changed in schedule.get(n, []):
            keyed = rng.random() < 0.3
            content = _decision(project, topic, choice, n, changed, rng)
            decision_key = f"project.{project}.{topic.replace(' ', '_')}" if keyed else None
            hint = Kind.DECISION if rng.random() < 0.5 or keyed else None
            day.said.append(Said(content, "decision", kind=hint, key=decision_key))
            decided[project][topic] = choice
        for project in active:
            if weekday and rng.random() < 0.3:
                day.said.append(Said(_meeting(project, decided[project], n, rng), "meeting", kind=Kind.EVENT))
        for _ in range(rng.randint(3, 6) if weekday else rng.randint(1, 3)):
            day.said.append(Said(_chitchat(rng, n), "chitchat"))
        for project in active if weekday else ():
            for _ in range(rng.randint(1, 3)):
                day.said.append(Said(_worklog(project, n, rng), "worklog"))
            if rng.random() < 0.6:
                owner, area = rng.choice(PEOPLE), rng.choice(AREAS)
                agreed = f"In the {project} standup on day {n} we agreed that {owner} owns the {area} this sprint"
                day.said.append(Said(agreed, "decision", kind=Kind.DECISION if rng.random() < 0.5 else None))
        if rng.random() < 0.35:
            errand = rng.choice(ERRANDS)
            day.said.append(Said(f"Remind me to {errand} (noted on day {n})", "task", Kind.TASK, forget_after="P14D"))
        if n in (40, 180, 300):
            secret = f"User vented about a falling-out with an old friend (day {n})"
            day.said.append(Said(secret, "chitchat"))
            forget_later.append((n + 3, secret))
        for when, secret in forget_later:
            if when == n:
                day.forgets.append(secret)

        for key, changes in PREFERENCES.items():
            live = [(c, w) for d, c, w in changes if d <= n]
            if live:
                current[key] = live[-1]
        day.asks = _asks(rng, n, asks_per_day if weekday else max(1, asks_per_day // 2), active, decided, current)
    return out


def _asks(
    rng: random.Random,
    n: int,
    count: int,
    active: list[str],
    decided: dict[str, dict[str, str]],
    current: dict[str, tuple[str, str]],
) -> list[Ask]:
    """What the user needs today: mostly the current projects, now and then a preference or a fact about them."""
    asks: list[Ask] = []
    known_critical = [c for c in CRITICAL if c[0] < n]
    for _ in range(count):
        roll = rng.random()
        work = [p for p in active if decided[p]]
        if roll < 0.55 and work:
            project = rng.choice(work)
            topic = rng.choice(sorted(decided[project]))
            query = f"what did we pick for {topic} in the {project} project?"
            asks.append(Ask(query, "decision", decided[project][topic]))
        elif roll < 0.65 and any(decided.values()):
            project = rng.choice([p for p in decided if decided[p]])
            asks.append(Ask(f"what were the action items from the last {project} sync?", "meeting"))
        elif roll < 0.82 and current:
            key = rng.choice(sorted(current))
            asks.append(Ask(PREFERENCE_ASKS[key], "preference", current[key][1]))
        elif roll < 0.90 and known_critical:
            _, _, _, query, needle, _ = rng.choice(known_critical)
            asks.append(Ask(query, "critical", needle))
        else:
            old = [p for p in decided if decided[p] and p not in active]
            if old:
                project = rng.choice(old)
                topic = rng.choice(sorted(decided[project]))
                query = f"back on the {project} project, what did we use for {topic}?"
                asks.append(Ask(query, "old decision", decided[project][topic]))
    return asks
