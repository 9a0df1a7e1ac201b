"""Knowledge-update benchmark (issue 33, "what is true now"): is the later word ranked first, the older one marked
and still found for a history question, and does `remember` name the earlier memory a new one may update?

A generated set, deterministic by a fixed seed (nothing downloaded, no model writes it): update items of eight
kinds (where someone lives, where someone works, people in roles, numbers and limits, dates of events, tools and
technical choices, diets and preferences, pets and things), each an old memory and a new one in varied wording,
a current question (asked as a question, as keywords and as a topic) and a history question; among ordinary
agent notes that share their vocabulary (other cities, colleagues, numbers) but update nothing stored.

Items and ordinary notes are split in two halves by index parity (A even, B odd): tune on A, confirm on B.
Per half, in a fresh store, through the real product (`tiers.memory.Memory`, the real embedder):
the old memories go in (one batch, ~6 months before the new ones), then the ordinary notes and the new memories
one at a time in the order of their dates, each `remember` answer read for the names of the memories the new one
may update (`Stored.may_update`); then every question through `Memory.recall`. With `--scopes`, a project and the
user scope beside it (`tiers.scopes.scoped.Scoped`), as a server with the user scope on holds them: each memory
goes where the product routes it, and each question reads both.

    PYTHONPATH=. .venv/bin/python -m tests.bench.updates --half both
    PYTHONPATH=. .venv/bin/python -m tests.bench.updates --limit-items 40 --out docs/updates.md

Marks and write-time hints are read with `getattr` (`Ranked.later`, `Stored.may_update`): on a product without
them they count as never given, and the ranked-first rows are the baseline.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tests.bench import packages
from tests.bench.locomo import keywords

SEED = 33
NOW = datetime(2026, 11, 30, 18, 0, tzinfo=UTC)
NEW_SPAN = timedelta(days=30)  # the new memories: the last month
OLD_BEFORE = timedelta(days=182)  # the old ones: about six months before their new one
PERIOD = timedelta(days=215)  # ordinary notes: the whole period
FORMS = ("question", "keywords", "topic")
HISTORY_TOP = 5
LIMIT = 10

# ---------------------------------------------------------------------------------------------------------------
# The set


@dataclass(frozen=True)
class Item:
    """One update: the old memory, the new one, and the questions; `same_day` when both are said the same day."""

    kind: str
    old: str
    new: str
    current: str
    history: str
    topic: str
    same_day: bool = False

    @property
    def forms(self) -> dict[str, str]:
        return {"question": self.current, "keywords": keywords(self.current), "topic": self.topic}


HOLDERS = [
    "Ana",
    "Bruno",
    "Carla",
    "Dmitri",
    "Elena",
    "Farid",
    "Greta",
    "Hugo",
    "Ines",
    "Jonas",
    "Kenji",
    "Leila",
    "Marco",
    "Nadia",
    "Oskar",
    "Priya",
    "Quentin",
    "Rosa",
    "Samir",
    "Tessa",
    "Umar",
    "Vera",
    "Wiktor",
    "Yara",
    "Zoe",
    "Amelie",
    "Bastian",
    "Chloe",
    "Diego",
    "Esther",
    "Felix",
    "Hana",
    "Ivan",
    "Julia",
    "Karim",
    "Lena",
    "Mateo",
    "Noor",
    "Olga",
    "Pablo",
    "Rania",
    "Stefan",
    "Tomas",
    "Ulla",
    "Viktor",
    "Wen",
    "Ximena",
    "Yusuf",
    "Zeynep",
    "Aurelio",
    "Beatriz",
    "Colm",
    "Dalia",
    "Emre",
    "Fiona",
    "Goran",
    "Helga",
    "Ismael",
    "Jana",
]
STAFF = [
    "Sarah",
    "Tom",
    "Miguel",
    "Aisha",
    "Lukas",
    "Mei",
    "Omar",
    "Hannah",
    "Ravi",
    "Sofia",
    "Daniel",
    "Ingrid",
    "Kofi",
    "Laura",
    "Pieter",
    "Yuki",
    "Camille",
    "Ahmed",
    "Nora",
    "Sven",
    "Lucia",
    "Arjun",
    "Freya",
    "Mohammed",
    "Elif",
    "Jakob",
    "Maya",
    "Chen",
    "Isabel",
    "Patrick",
    "Amara",
    "Erik",
    "Rita",
    "Hamid",
    "Clara",
    "Luca",
]
CITIES = [
    "Berlin",
    "Lisbon",
    "Madrid",
    "Paris",
    "Vienna",
    "Prague",
    "Warsaw",
    "Dublin",
    "Oslo",
    "Stockholm",
    "Helsinki",
    "Copenhagen",
    "Amsterdam",
    "Brussels",
    "Zurich",
    "Milan",
    "Rome",
    "Athens",
    "Istanbul",
    "Tallinn",
    "Riga",
    "Vilnius",
    "Krakow",
    "Porto",
    "Seville",
    "Valencia",
    "Lyon",
    "Munich",
    "Hamburg",
    "Toronto",
    "Montreal",
    "Boston",
    "Chicago",
    "Denver",
    "Seattle",
    "Austin",
    "Tokyo",
    "Seoul",
    "Singapore",
    "Sydney",
    "Melbourne",
    "Nairobi",
    "Accra",
]
COMPANIES = [
    "Northwind",
    "Globex",
    "Initech",
    "Umbrella",
    "Hooli",
    "Vandelay",
    "Stark",
    "Wayne",
    "Acme",
    "Tyrell",
    "Cyberdyne",
    "Soylent",
    "Wonka",
    "Aperture",
    "Massive",
    "Monarch",
    "Oscorp",
    "Piper",
    "Dunder",
    "Gringotts",
    "Nakatomi",
    "Virtucon",
    "Zorg",
    "Blueberry",
    "Kinetic",
    "Lumen",
    "Quanta",
    "Fathom",
    "Halcyon",
    "Meridian",
]
JOBS = ("engineer", "designer", "analyst", "product manager", "data scientist", "recruiter", "accountant", "teacher")
TEAMS = [
    "payments",
    "search",
    "billing",
    "mobile",
    "infra",
    "growth",
    "data",
    "security",
    "onboarding",
    "checkout",
    "identity",
    "platform",
    "reporting",
    "ledger",
    "notifications",
    "pricing",
    "support-tools",
    "marketing-site",
    "analytics",
    "fraud",
]
ROLES = ("manager", "tech lead", "product owner", "designer")
SERVICES = [
    "billing",
    "search",
    "geocoding",
    "payments",
    "export",
    "upload",
    "auth",
    "inventory",
    "orders",
    "shipping",
    "reports",
    "webhook",
    "catalog",
    "pricing",
    "ledger",
    "messaging",
]
METRICS = (  # (subject, topic words, unit, values)
    ("the rate limit of the {s} API", "{s} rate limit", "requests a minute", (100, 200, 300, 500, 1000, 2000)),
    ("the request timeout of the {s} service", "{s} timeout", "seconds", (5, 10, 15, 30, 45, 60, 90)),
    ("the maximum batch size of the {s} job", "{s} batch size", "records", (50, 100, 250, 500, 1000)),
    ("the monthly cloud budget of the {s} team", "{s} cloud budget", "dollars", (800, 1200, 2000, 3500, 5000)),
    ("the connection pool size of the {s} database", "{s} pool size", "connections", (10, 20, 40, 64, 100)),
)
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
EVENTS = (  # (event, topic)
    ("the {x} launch", "{x} launch date"),
    ("the {x} team offsite", "{x} offsite date"),
    ("the {x} security audit", "{x} audit date"),
    ("the {x} release", "{x} release date"),
    ("the {x} migration cut-over", "{x} cut-over date"),
)
PROJECTS = [
    "Atlas",
    "Beacon",
    "Comet",
    "Delta",
    "Ember",
    "Falcon",
    "Glacier",
    "Harbor",
    "Iris",
    "Juniper",
    "Kestrel",
    "Lantern",
    "Mosaic",
    "Nimbus",
    "Orbit",
    "Pulsar",
    "Quartz",
    "Raven",
    "Sierra",
    "Tundra",
    "Vortex",
    "Willow",
    "Yonder",
    "Zephyr",
]
PRODUCTS = PROJECTS[:20]  # the products of dated events: the first twenty project names
TOOLS = {
    "database": ("PostgreSQL", "MySQL", "MongoDB", "SQLite", "Cassandra", "DynamoDB", "CockroachDB"),
    "message queue": ("RabbitMQ", "Kafka", "SQS", "NATS", "Redis Streams", "Pulsar"),
    "CI system": ("Jenkins", "GitHub Actions", "GitLab CI", "CircleCI", "Buildkite", "Drone"),
    "web framework": ("Django", "Flask", "FastAPI", "Rails", "Express", "Spring Boot", "Phoenix"),
    "language": ("Python", "Go", "Rust", "Java", "Kotlin", "TypeScript", "Elixir"),
}
EDITORS = ("Vim", "Emacs", "VS Code", "Zed", "Sublime Text", "IntelliJ", "Helix", "Neovim")
DIETS = ("vegetarian", "vegan", "pescatarian", "gluten-free", "keto", "dairy-free")
DRINKS = ("flat white", "espresso", "green tea", "oat latte", "black coffee", "chai", "cortado", "matcha")
SLOTS = ("early morning", "late morning", "early afternoon", "late afternoon")
ANIMALS = ("dog", "cat", "rabbit", "parrot", "tortoise")
PET_NAMES = [
    "Miso",
    "Tofu",
    "Biscuit",
    "Pepper",
    "Luna",
    "Mochi",
    "Ziggy",
    "Olive",
    "Pickle",
    "Waffles",
    "Nacho",
    "Juniper",
    "Pixel",
    "Clementine",
    "Basil",
    "Churro",
    "Sprout",
    "Noodle",
    "Ginger",
    "Marble",
]
CARS = ("Toyota Corolla", "Volkswagen Golf", "Tesla Model 3", "Skoda Octavia", "Honda Civic", "Renault Zoe", "Fiat 500")
LAPTOPS = ("ThinkPad X1", "MacBook Air", "Dell XPS 13", "Framework 13", "MacBook Pro", "Surface Laptop")
BIKES = ("Brompton", "Trek road bike", "cargo bike", "Cannondale gravel bike", "Specialized e-bike")


def _cap(text: str) -> str:
    return text[0].upper() + text[1:]


def _pairs(rng: random.Random, values: Sequence[Any]) -> tuple[Any, Any]:
    old, new = rng.sample(list(values), 2)
    return old, new


def _date(rng: random.Random) -> str:
    return f"{rng.choice(MONTHS)} {rng.randint(1, 28)}"


Maker = Callable[[random.Random, Any], Item]


def _residence(rng: random.Random, p: str) -> Item:
    a, b = _pairs(rng, CITIES)
    old = rng.choice(
        [
            f"{p} lives in {a}.",
            f"{p} has a flat in {a}, close to the river.",
            f"{p} is based in {a} and works from home there.",
            f"{p}'s home is in {a}.",
        ]
    )
    new = rng.choice(
        [
            f"{p} moved to {b} last week; {p} lives in {b} now.",
            f"{p} relocated to {b} this month.",
            f"{p} has settled in {b} after the move.",
            f"New address for {p}: an apartment in {b}, since the move.",
        ]
    )
    current = rng.choice([f"Where does {p} live?", f"Which city is {p} living in?"])
    history = rng.choice([f"Where did {p} live before {b}?", f"Which city was {p} in before moving to {b}?"])
    return Item("residence", old, new, current, history, f"{p} home city")


def _work(rng: random.Random, p: str) -> Item:
    a, b = _pairs(rng, COMPANIES)
    job = rng.choice(JOBS)
    old = rng.choice(
        [f"{p} works at {a} as a {job}.", f"{p} is a {job} at {a}.", f"{p} has been at {a} for three years."]
    )
    new = rng.choice(
        [
            f"{p} left {a} and joined {b}.",
            f"{p} started a new job at {b} on Monday.",
            f"{p} is at {b} now, hired as a {job}.",
            f"{b} hired {p}; the first day there was yesterday.",
        ]
    )
    current = rng.choice([f"Where does {p} work?", f"Which company does {p} work for?"])
    history = f"Where did {p} work before {b}?"
    return Item("work", old, new, current, history, f"{p} employer")


def _role(rng: random.Random, subject: tuple[str, str]) -> Item:
    team, role = subject
    a, b = _pairs(rng, STAFF)
    old = rng.choice(
        [
            f"{a} is the {role} of the {team} team.",
            f"The {team} team's {role} is {a}.",
            f"{a} runs the {team} team as its {role}.",
        ]
    )
    new = rng.choice(
        [
            f"{a} left; the {team} team's {role} is now {b}.",
            f"{b} took over as {role} of the {team} team.",
            f"From this week {b} is {role} for {team}.",
            f"Reorg: {team} has a new {role}, {b}.",
        ]
    )
    current = f"Who is the {role} of the {team} team?"
    history = f"Who was the {team} team's {role} before {b}?"
    return Item("role", old, new, current, history, f"{team} {role}")


def _number(rng: random.Random, subject: tuple[int, str]) -> Item:
    index, s = subject
    phrase, topic, unit, values = METRICS[index]
    what, short = phrase.format(s=s), topic.format(s=s)
    a, b = _pairs(rng, values)
    moved = "raised" if b > a else "lowered"
    old = rng.choice([f"{_cap(what)} is {a} {unit}.", f"We set {what} to {a} {unit}.", f"Note: {what} = {a} {unit}."])
    new = rng.choice(
        [
            f"{_cap(what)} is now {b} {unit}.",
            f"We changed {what}; it is {b} {unit} from today.",
            f"{_cap(short)} {moved} to {b} {unit}.",
            f"Heads up: {b} {unit} is the new {short}.",
        ]
    )
    current = f"What is {what}?"
    history = rng.choice([f"What was {what} before it changed to {b}?", f"What was {what} originally?"])
    return Item("number", old, new, current, history, short)


def _event(rng: random.Random, subject: tuple[int, str]) -> Item:
    index, x = subject
    template, topic = EVENTS[index]
    event = template.format(x=x)
    a, b = _date(rng), _date(rng)
    while b == a:
        b = _date(rng)
    old = rng.choice(
        [f"{_cap(event)} is planned for {a}.", f"We scheduled {event} for {a}.", f"{_cap(event)} will happen on {a}."]
    )
    new = rng.choice(
        [
            f"{_cap(event)} slipped to {b}.",
            f"We moved {event} to {b}.",
            f"New date for {event}: {b}.",
            f"{_cap(event)} was pushed back; it is now on {b}.",
        ]
    )
    current = f"When is {event}?"
    history = rng.choice([f"What was {event} first planned for?", f"What was the original date of {event}?"])
    return Item("date", old, new, current, history, topic.format(x=x), same_day=rng.random() < 0.3)


def _tool(rng: random.Random, subject: tuple[str, str]) -> Item:
    project, category = subject
    a, b = _pairs(rng, TOOLS[category])
    old = rng.choice(
        [
            f"{project} uses {a} as its {category}.",
            f"The {category} for {project} is {a}.",
            f"{project} is built on {a}.",
        ]
    )
    new = rng.choice(
        [
            f"We switched {project} from {a} to {b}.",
            f"{project} runs on {b} now.",
            f"{project} migrated its {category} to {b} last sprint.",
            f"Done: {project} is on {b}, the move finished Friday.",
        ]
    )
    current = f"Which {category} does {project} use?"
    history = f"Which {category} did {project} use before {b}?"
    return Item("tool", old, new, current, history, f"{project} {category}")


def _editor(rng: random.Random, p: str) -> Item:
    a, b = _pairs(rng, EDITORS)
    old = rng.choice([f"{p} writes code in {a}.", f"{p}'s editor is {a}, with a heavily tuned config."])
    new = rng.choice(
        [
            f"{p} switched to {b} for editing.",
            f"{p} gave up {a}; {b} is the editor now.",
            f"{p} codes in {b} these days.",
        ]
    )
    return Item("tool", old, new, f"Which editor does {p} use?", f"Which editor did {p} use before {b}?", f"{p} editor")


def _diet(rng: random.Random, p: str) -> Item:
    a, b = _pairs(rng, DIETS)
    old = rng.choice([f"{p} is {a}.", f"{p} eats {a}; keep that in mind for team dinners.", f"{p} follows a {a} diet."])
    new = rng.choice([f"{p} went {b} in March.", f"{p} is {b} now.", f"{p} changed diet: strictly {b} from now on."])
    return Item(
        "diet", old, new, f"What diet does {p} follow?", f"What diet did {p} follow before going {b}?", f"{p} diet"
    )


def _drink(rng: random.Random, p: str) -> Item:
    a, b = _pairs(rng, DRINKS)
    old = rng.choice([f"{p} always orders a {a}.", f"{p}'s usual drink is a {a}."])
    new = rng.choice(
        [
            f"{p} gave up the {a} and drinks {b} now.",
            f"{p} switched to {b} at the café.",
            f"{p} only orders {b} lately.",
        ]
    )
    return Item(
        "preference",
        old,
        new,
        f"What does {p} drink at the café?",
        f"What did {p} drink before {b}?",
        f"{p} usual drink",
    )


def _slot(rng: random.Random, p: str) -> Item:
    a, b = _pairs(rng, SLOTS)
    old = rng.choice([f"{p} prefers meetings in the {a}.", f"Book {p}'s meetings in the {a}; that works best."])
    new = rng.choice(
        [f"{p} wants meetings in the {b} from now on.", f"Meetings with {p}: {b} only, since the new schedule."]
    )
    return Item(
        "preference",
        old,
        new,
        f"When does {p} prefer meetings?",
        f"When did {p} prefer meetings before the {b}?",
        f"{p} meeting time",
    )


def _pet(rng: random.Random, subject: tuple[str, str]) -> Item:
    p, animal = subject
    a, b = _pairs(rng, PET_NAMES)
    old = rng.choice([f"{p} has a {animal} named {a}.", f"{p}'s {animal} is called {a}."])
    new = rng.choice(
        [
            f"{p} adopted a new {animal}, {b}, after {a} passed away.",
            f"{p}'s {animal} is {b} now; {p} renamed it.",
            f"Say hi to {b}, the {animal} {p} took in last month.",
        ]
    )
    current = f"What is the name of {p}'s {animal}?"
    return Item("pet", old, new, current, f"What was {p}'s {animal} called before {b}?", f"{p} {animal} name")


def _thing(rng: random.Random, subject: tuple[str, str]) -> Item:
    p, thing = subject
    values = {"car": CARS, "laptop": LAPTOPS, "bike": BIKES}[thing]
    a, b = _pairs(rng, values)
    old = rng.choice([f"{p} has a {a} as {p}'s {thing}.", f"{p}'s {thing} is a {a}."])
    new = rng.choice(
        [
            f"{p} sold the old {thing} and got a {b}.",
            f"{p} bought a {b}; the {a} is gone.",
            f"New {thing} for {p}: a {b}.",
        ]
    )
    return Item(
        "thing", old, new, f"What {thing} does {p} have?", f"What {thing} did {p} have before the {b}?", f"{p} {thing}"
    )


FIRST_PERSON = (  # the issue's own wording, said by the user of the memory
    Item(
        "residence",
        "I live in Berlin.",
        "I moved to Lisbon last week; I live in Lisbon now.",
        "Where do I live?",
        "Where did I live before Lisbon?",
        "my home city",
    ),
    Item(
        "tool",
        "I use Vim for everything.",
        "I switched to Zed; it's my editor now.",
        "Which editor do I use?",
        "Which editor did I use before Zed?",
        "my editor",
    ),
    Item(
        "role",
        "My manager is Sarah.",
        "Sarah left; my manager is now Tom.",
        "Who is my manager?",
        "Who was my manager before Tom?",
        "my manager",
    ),
    Item(
        "date",
        "The release is planned for March 3.",
        "The release slipped to April 14.",
        "When is the release?",
        "What was the release first planned for?",
        "release date",
        same_day=True,
    ),
    Item(
        "number",
        "Our rate limit is 200 a minute.",
        "Our rate limit is now 500 a minute.",
        "What is our rate limit?",
        "What was our rate limit before 500?",
        "our rate limit",
    ),
    Item(
        "number",
        "My phone number is +49 151 2345 6789.",
        "My new number is +351 912 345 678.",
        "What is my phone number?",
        "What was my phone number before the new one?",
        "my phone number",
    ),
    Item(
        "diet",
        "I'm vegetarian.",
        "I've been vegan since January.",
        "What diet do I follow?",
        "What did I eat before going vegan?",
        "my diet",
    ),
    Item(
        "pet",
        "My cat is called Miso.",
        "We renamed the cat: she answers to Pixel now.",
        "What is my cat's name?",
        "What was my cat called before Pixel?",
        "my cat name",
    ),
    Item(
        "work",
        "I work at Globex as a data engineer.",
        "I joined Initech this month as a staff engineer.",
        "Where do I work?",
        "Where did I work before Initech?",
        "my employer",
    ),
    Item(
        "preference",
        "I prefer window seats on flights.",
        "Aisle seats from now on, please; my knee needs it.",
        "Which seat do I prefer on flights?",
        "Which seat did I prefer before the aisle?",
        "my flight seat",
    ),
)


def items(seed: int = SEED) -> list[Item]:
    """The update items: first-person ones from the issue, then per kind from distinct subjects, interleaved."""
    rng = random.Random(seed)
    people = list(HOLDERS)
    kinds: list[tuple[Maker, list[Any]]] = []
    for maker, count in ((_residence, 30), (_work, 28), (_editor, 12), (_diet, 14), (_drink, 12), (_slot, 10)):
        rng.shuffle(people)
        kinds.append((maker, people[:count]))
    roles = [(t, r) for t in TEAMS for r in ROLES]
    rng.shuffle(roles)
    kinds.append((_role, roles[:30]))
    numbers = [(i, s) for i in range(len(METRICS)) for s in (SERVICES if i != 3 else TEAMS)]
    rng.shuffle(numbers)
    kinds.append((_number, numbers[:30]))
    events = [(i, x) for i in range(len(EVENTS)) for x in PRODUCTS]
    rng.shuffle(events)
    kinds.append((_event, events[:30]))
    tools = [(p, c) for p in PROJECTS for c in TOOLS]
    rng.shuffle(tools)
    kinds.append((_tool, tools[:28]))
    rng.shuffle(people)
    kinds.append((_pet, [(p, rng.choice(ANIMALS)) for p in people[:20]]))
    rng.shuffle(people)
    kinds.append((_thing, [(p, ("car", "laptop", "bike")[i % 3]) for i, p in enumerate(people[:21])]))
    made = [[maker(rng, subject) for subject in subjects] for maker, subjects in kinds]
    out = list(FIRST_PERSON)
    for i in range(max(len(m) for m in made)):
        out.extend(m[i] for m in made if i < len(m))
    return out


CUISINES = ("Thai", "Ethiopian", "Georgian", "ramen", "tapas", "Lebanese", "pizza", "Korean", "vegan", "sushi")
TOPICS_TALKED = (
    "the hiring plan",
    "a side project",
    "holiday plans",
    "the quarterly goals",
    "a book",
    "the new office",
    "the on-call rota",
    "running a half marathon",
    "home renovation",
    "the conference talk",
)
BOOKS = (
    "Project Hail Mary",
    "The Pragmatic Programmer",
    "Piranesi",
    "Designing Data-Intensive Applications",
    "Dune",
    "The Overstory",
    "Klara and the Sun",
    "Thinking in Systems",
    "A Philosophy of Software Design",
    "Middlemarch",
)
ERRANDS = (
    ("the dry cleaning", "laundrette"),
    ("a parcel", "post office"),
    ("new glasses", "optician"),
    ("printer ink", "stationery shop"),
    ("a birthday cake", "bakery"),
    ("the repaired watch", "jeweller"),
    ("prescription refills", "pharmacy"),
    ("bike lights", "bike shop"),
)
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "the weekend", "end of month")
SIGHTS = ("old town", "harbour", "botanical garden", "modern art museum", "castle", "food market", "cathedral")
DISHES = ("risotto", "lentil soup", "shakshuka", "banana bread", "dumplings", "paella", "curry", "focaccia")
DOCS = ("design doc", "runbook", "postmortem", "migration plan", "API reference", "onboarding guide")


def _ordinary_one(rng: random.Random) -> str:
    p, q = rng.choice(HOLDERS), rng.choice(STAFF)
    city, company, team = rng.choice(CITIES), rng.choice(COMPANIES), rng.choice(TEAMS)
    project, service, n = rng.choice(PROJECTS), rng.choice(SERVICES), rng.randint(2, 90)
    tool = rng.choice([t for ts in TOOLS.values() for t in ts] + list(EDITORS))
    day = rng.choice(DAYS)
    errand, shop = rng.choice(ERRANDS)
    choices = (
        f"Lunch with {p} at a {rng.choice(CUISINES)} place in {city}; we talked about {rng.choice(TOPICS_TALKED)}.",
        f"Flew to {city} for a conference; the hotel was {n} minutes from the venue.",
        f"Bug: the {service} API returned 503 errors for {n} minutes after the deploy on {day}.",
        f"Reviewed {q}'s pull request on {project}: {n} comments, mostly about naming.",
        f"Read {n} pages of {rng.choice(BOOKS)} on the train to {city}.",
        f"Errand: pick up {errand} from the {shop} before {day}.",
        f"Meeting with the {team} team about {rng.choice(TOPICS_TALKED)}; follow-up on {day}.",
        f"Code note: in {project}, a flaky test in the {service} module failed {n} times this week.",
        f"Weekend trip to {city} with {p}; we visited the {rng.choice(SIGHTS)}.",
        f"{q} recommended the book {rng.choice(BOOKS)} during the {team} retro.",
        f"Cooked {rng.choice(DISHES)} for dinner with {p}; it took {n} minutes.",
        f"Task: write the {rng.choice(DOCS)} for {project} by {day}.",
        f"Called {company} support about an invoice; ticket {1000 + n * 37 + rng.randint(0, 30)} is open.",
        f"Ran {n % 20 + 3} km along the river in {city} before work.",
        f"{p} mentioned a visit to {city} in {rng.choice(MONTHS)} to see family.",
        f"Tried {tool} on a toy project for an hour; the docs were clear enough.",
        f"{p} shared a photo of a {rng.choice(ANIMALS)} at the {rng.choice(SIGHTS)} in {city}.",
        f"Interviewed a candidate from {company} for the {team} team; strong on debugging.",
        f"Paired with {q} on the {service} export; fixed an off-by-one in pagination.",
        f"Dentist reminder for {p}: bring the insurance card on {day}.",
        f"Booked a table for {n % 8 + 2} at the {rng.choice(CUISINES)} restaurant near the {rng.choice(SIGHTS)}.",
        f"Wrote a benchmark script for {project}; {n} runs, median looked stable.",
        f"Demo of {project} to the {team} team went well; {q} asked about {tool}.",
        f"Train to {city} was {n} minutes late; worked on the {rng.choice(DOCS)} meanwhile.",
    )
    return rng.choice(choices)


def ordinary(count: int = 2_400, seed: int = SEED) -> list[str]:
    """`count` distinct everyday notes that share the items' vocabulary but update no stored fact."""
    rng, seen, out = random.Random(seed + 1), set[str](), list[str]()
    while len(out) < count:
        text = _ordinary_one(rng)
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def half(values: Sequence[Any], name: str) -> list[Any]:
    """Half A is the even indexes, half B the odd ones."""
    return list(values[0 if name == "A" else 1 :: 2])


@dataclass(frozen=True)
class Dated:
    """One memory with when it happened, and which item it belongs to (None: an ordinary note)."""

    text: str
    at: datetime
    item: int | None = None
    is_new: bool = False


def timeline(chosen: Sequence[Item], notes: Sequence[str], seed: int = SEED) -> tuple[list[Dated], list[Dated]]:
    """(old memories, then everything else in date order): news in the last month, each old ~6 months before its
    new (same day for a date that moved that day, a few hours earlier), notes over the whole period."""
    rng = random.Random(seed + 2)
    olds, rest = [], []
    for index, item in enumerate(chosen):
        new_at = NOW - NEW_SPAN + timedelta(minutes=rng.randint(0, int(NEW_SPAN.total_seconds() // 60) - 60))
        old_at = (
            new_at - timedelta(hours=rng.randint(2, 8))
            if item.same_day
            else new_at - OLD_BEFORE - timedelta(days=rng.randint(0, 20))
        )
        olds.append(Dated(item.old, old_at, index))
        rest.append(Dated(item.new, new_at, index, True))
    for text in notes:
        rest.append(Dated(text, NOW - PERIOD + timedelta(minutes=rng.randint(0, int(PERIOD.total_seconds() // 60)))))
    rest.sort(key=lambda d: d.at)
    return olds, rest


# ---------------------------------------------------------------------------------------------------------------
# Scoring (pure)


def ranked_first(hit_ids: Sequence[str], answer: str) -> bool:
    return bool(hit_ids) and hit_ids[0] == answer


def above(hit_ids: Sequence[str], new: str, old: str) -> bool:
    """The new memory is shown and ranked above the old one (or the old one is not shown): the order of the pair
    alone, apart from whether some other memory is ranked first."""
    return new in hit_ids and (old not in hit_ids or hit_ids.index(new) < hit_ids.index(old))


def within(hit_ids: Sequence[str], answer: str, top: int = HISTORY_TOP) -> bool:
    return answer in hit_ids[:top]


def marked_by(hits: Iterable[Any], old_id: str, new_id: str) -> bool | None:
    """None where the old memory is not among `hits`; else whether it carries the mark of `new_id`."""
    for hit in hits:
        if hit.record.id == old_id:
            later = getattr(hit, "later", None)
            return later is not None and getattr(later, "id", None) == new_id
    return None


def wrongly_marked(hits: Iterable[Any], old_id: str, new_id: str) -> bool:
    """The old memory is shown marked as replaced by some memory other than its new one."""
    for hit in hits:
        if hit.record.id == old_id:
            later = getattr(hit, "later", None)
            return later is not None and getattr(later, "id", None) != new_id
    return False


def names(stored: Any) -> tuple[str, ...]:
    """The ids a `remember` answer names as memories the new one may update (none on a product without hints)."""
    return tuple(getattr(m, "id", "") for m in getattr(stored, "may_update", ()) or ())


@dataclass
class Score:
    """Counts of one half; `share` turns each into a rate."""

    n_items: int = 0
    n_ordinary: int = 0
    first: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FORMS, 0))
    first_1: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FORMS, 0))
    above: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FORMS, 0))  # new shown and above the old
    history: int = 0
    shown_old: int = 0
    shown_both: int = 0  # recalls showing the old memory and the new one
    marked_both: int = 0
    marked_wrong: int = 0  # shown old ones marked by another memory than their new one
    marked: int = 0
    recalls: int = 0
    other_marks: int = 0  # marks on shown memories other than an update item's older one by its later one
    hint_right: int = 0
    hint_any: int = 0
    false_alarms: int = 0
    false_on_facts: int = 0  # false alarms that name an update item's memory (not only other notes)
    latencies: list[float] = field(default_factory=list)

    def merge(self, other: Score) -> None:
        for name in (
            "n_items",
            "n_ordinary",
            "history",
            "shown_old",
            "shown_both",
            "marked_both",
            "marked_wrong",
            "marked",
            "recalls",
            "other_marks",
            "hint_right",
            "hint_any",
            "false_alarms",
            "false_on_facts",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for form in FORMS:
            self.first[form] += other.first[form]
            self.first_1[form] += other.first_1[form]
            self.above[form] += other.above[form]
        self.latencies.extend(other.latencies)


def share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


GOALS = {"first": 0.95, "history": 0.90, "marked": 1.0, "hint": 0.90, "false": 0.05}


def rows(score: Score) -> list[tuple[str, str, str, str]]:
    """(metric, value, n, goal) rows of a table."""
    n, out = score.n_items, []
    for form in FORMS:
        out.append((f"current ranked first, {form} (limit 10)", f"{share(score.first[form], n):.1%}", str(n), ">= 95%"))
    for form in FORMS:
        out.append(
            (f"current ranked first, {form} (limit 1)", f"{share(score.first_1[form], n):.1%}", str(n), ">= 95%")
        )
    for form in FORMS:
        out.append((f"(diagnostic) new shown above old, {form}", f"{share(score.above[form], n):.1%}", str(n), ""))
    out += [
        ("older one marked where shown", f"{share(score.marked, score.shown_old):.1%}", str(score.shown_old), "100%"),
        (
            "(diagnostic) older one marked by another memory",
            f"{share(score.marked_wrong, score.shown_old):.1%}",
            str(score.shown_old),
            "",
        ),
        (
            "(diagnostic) marked where the new one is shown too",
            f"{share(score.marked_both, score.shown_both):.1%}",
            str(score.shown_both),
            "",
        ),
        (
            "(diagnostic) marks on memories no update made older, per recall",
            f"{score.other_marks / max(score.recalls, 1):.2f}",
            str(score.recalls),
            "",
        ),
        (f"history: older one in top {HISTORY_TOP}", f"{share(score.history, n):.1%}", str(n), ">= 90%"),
        ("remember names the earlier memory", f"{share(score.hint_right, n):.1%}", str(n), ">= 90%"),
        ("remember names any memory (updates)", f"{share(score.hint_any, n):.1%}", str(n), ""),
        (
            "false alarms on ordinary notes",
            f"{share(score.false_alarms, score.n_ordinary):.1%}",
            str(score.n_ordinary),
            "<= 5%",
        ),
        (
            "(diagnostic) false alarms naming an update's memory",
            f"{share(score.false_on_facts, score.n_ordinary):.1%}",
            str(score.n_ordinary),
            "",
        ),
        (
            "recall p50 (ms)",
            f"{statistics.median(score.latencies) if score.latencies else 0.0:.1f}",
            str(len(score.latencies)),
            "",
        ),
    ]
    return out


def table(scores: dict[str, Score]) -> list[str]:
    names_ = list(scores)
    lines = [
        "| metric | "
        + " | ".join(f"half {h}" if h != "both" else "both" for h in names_)
        + " | n (last column) | goal |"
    ]
    lines.append("|---|" + "---:|" * len(names_) + "---:|---|")
    per = {h: rows(s) for h, s in scores.items()}
    last = names_[-1]
    for i, (metric, _, _, goal) in enumerate(per[last]):
        cells = [per[h][i][1] for h in names_]
        lines.append(f"| {metric} | " + " | ".join(cells) + f" | {per[last][i][2]} | {goal} |")
    return lines


# ---------------------------------------------------------------------------------------------------------------
# Runner


def _iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


class _Scoped:
    """A project and the user scope beside it, as a server with the user scope on holds them (`--scopes`): each
    memory goes where the product routes it, each recall reads both; answers as `Memory`'s."""

    def __init__(self, folder: Path, embedder: Any, settings: Any) -> None:
        from tiers.memory import Memory
        from tiers.scopes.scoped import Scoped

        self.parts = (Memory(folder / "project", embedder, settings), Memory(folder / "user", embedder, settings))
        self.scoped = Scoped(*self.parts)

    def remember(self, items: Sequence[Any], now: datetime) -> list[Any]:
        return [placed.stored for placed in self.scoped.remember(items, now)]

    def recall(self, query: str, now: datetime, limit: int) -> Any:
        recalled = self.scoped.recall(query, now, limit=limit)
        return SimpleNamespace(hits=[hit.ranked for hit in recalled.hits])

    def close(self) -> None:
        for memory in self.parts:
            memory.close()


def run_half(
    name: str, chosen: Sequence[Item], notes: Sequence[str], embedder: Any, log: Any, scopes: bool = False
) -> Score:
    from tiers.memory import Memory, MemorySettings
    from tiers.recall.rank import RecallSettings
    from tiers.records import MemoryIn

    score = Score(n_items=len(chosen), n_ordinary=len(notes))
    olds, rest = timeline(chosen, notes)
    old_ids: dict[int, str] = {}
    new_ids: dict[int, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        # The later-first order (MEMTIERS_LATER_FIRST, on by default) is asked for by name: the bench measures it on.
        settings = MemorySettings(recall=RecallSettings(updates=True))
        memory: Any = _Scoped(Path(tmp), embedder, settings) if scopes else Memory(Path(tmp) / "ns", embedder, settings)
        stored = memory.remember(
            [MemoryIn(content=d.text, occurred_at=_iso(d.at)) for d in olds], max(d.at for d in olds)
        )
        for d, s in zip(olds, stored, strict=True):
            assert d.item is not None
            old_ids[d.item] = s.id
        started = time.perf_counter()
        for step, d in enumerate(rest):
            (s,) = memory.remember([MemoryIn(content=d.text, occurred_at=_iso(d.at))], d.at + timedelta(seconds=5))
            named = names(s)
            if d.item is None:
                score.false_alarms += bool(named)
                facts = set(old_ids.values()) | set(new_ids.values())
                score.false_on_facts += any(i in facts for i in named)
            else:
                new_ids[d.item] = s.id
                score.hint_any += bool(named)
                score.hint_right += old_ids[d.item] in named
            if step % 250 == 0:
                print(
                    f"# half {name}: stored {step}/{len(rest)} one at a time, {time.perf_counter() - started:.0f} s",
                    file=log,
                    flush=True,
                )
        pair_of = {old_ids[i]: new_ids[i] for i in new_ids}  # each item's older memory -> its later one
        for index, item in enumerate(chosen):
            old, new = old_ids[index], new_ids[index]
            asked: list[list[Any]] = []
            for form, query in item.forms.items():
                for limit, tally in ((LIMIT, score.first), (1, score.first_1)):
                    t0 = time.perf_counter()
                    packed = memory.recall(query, NOW, limit=limit)
                    score.latencies.append((time.perf_counter() - t0) * 1000)
                    ids = [h.record.id for h in packed.hits]
                    tally[form] += ranked_first(ids, new)
                    if limit == LIMIT:
                        score.above[form] += above(ids, new, old)
                    asked.append(packed.hits)
            t0 = time.perf_counter()
            packed = memory.recall(item.history, NOW, limit=LIMIT)
            score.latencies.append((time.perf_counter() - t0) * 1000)
            score.history += within([h.record.id for h in packed.hits], old)
            asked.append(packed.hits)
            for hits in asked:
                score.recalls += 1
                score.other_marks += sum(
                    h.record.id != old and h.later is not None and pair_of.get(h.record.id) != h.later.id for h in hits
                )
                mark = marked_by(hits, old, new)
                if mark is not None:
                    score.shown_old += 1
                    score.marked += mark
                    score.marked_wrong += wrongly_marked(hits, old, new)
                    if any(h.record.id == new for h in hits):
                        score.shown_both += 1
                        score.marked_both += mark
        memory.close()
    return score


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--half", choices=("A", "B", "both"), default="both")
    parser.add_argument(
        "--limit-items", type=int, default=0, help="only the first N items (and N*10 notes) of each half"
    )
    parser.add_argument("--ordinary", type=int, default=2_400, help="ordinary notes in all, split between the halves")
    parser.add_argument("--out", type=Path, help="append the markdown here")
    parser.add_argument(
        "--scopes", action="store_true", help="a project with the user scope beside it, as a server holds them"
    )
    args = parser.parse_args(argv)

    from tiers.model.embedder import FastEmbedder

    all_items, all_notes = items(), ordinary(args.ordinary)
    embedder = FastEmbedder()
    embedder.load()
    embedder.embed(["warm up"])
    started = time.perf_counter()
    scores: dict[str, Score] = {}
    for name in ("A", "B") if args.half == "both" else (args.half,):
        chosen, notes = half(all_items, name), half(all_notes, name)
        if args.limit_items:
            chosen, notes = chosen[: args.limit_items], notes[: args.limit_items * 10]
        scores[name] = run_half(name, chosen, notes, embedder, sys.stderr, args.scopes)
    if len(scores) == 2:
        both = Score()
        for s in scores.values():
            both.merge(s)
        scores["both"] = both
    elapsed = time.perf_counter() - started
    kinds = sorted({i.kind for i in all_items})
    lines = [
        f"Knowledge updates: {len(all_items)} update items ({', '.join(kinds)}), {len(all_notes)} ordinary notes, "
        f"halves by index parity; run: --half {args.half}"
        + (f" --limit-items {args.limit_items}" if args.limit_items else "")
        + (" --scopes (a project and the user scope)" if args.scopes else ""),
        f"run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()} {platform.system()}, "
        f"Python {platform.python_version()}, {elapsed:.0f} s; {packages()}",
        "",
        *table(scores),
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        with args.out.open("a") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
