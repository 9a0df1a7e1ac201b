"""Templates and vocabularies of an agent's notes over years, for `tests.bench.synthetic`."""

from __future__ import annotations

# fmt: off

PEOPLE = [
    "Ana", "Bo", "Chen", "Dara", "Eli", "Fatima", "Goran", "Hana", "Ivan", "Jun", "Kofi", "Lena", "Marco",
    "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Viktor", "Wen", "Ximena", "Yusuf",
    "Zoe", "Aiko", "Bruno", "Carla", "Dmitri", "Esther", "Felix", "Greta", "Hugo", "Ines", "Jonas", "Kira",
    "Luis", "Maya", "Nils", "Olga", "Pablo", "Rui", "Sara", "Tom", "Ulla", "Vera", "Will", "Yara", "Zeynep",
    "Amara", "Benedikt", "Chiara", "Diego", "Emre", "Freya", "Gustavo", "Helga", "Imran", "Julia",
]
CITIES = [
    "Lisbon", "Porto", "Berlin", "Munich", "Paris", "Lyon", "Madrid", "Seville", "Rome", "Milan", "Vienna",
    "Prague", "Warsaw", "Krakow", "Oslo", "Stockholm", "Copenhagen", "Helsinki", "Dublin", "Edinburgh",
    "London", "Amsterdam", "Rotterdam", "Brussels", "Zurich", "Geneva", "Athens", "Istanbul", "Tokyo", "Osaka",
    "Seoul", "Singapore", "Bangkok", "Sydney", "Toronto", "Montreal", "Boston", "Chicago", "Denver", "Austin",
    "Seattle", "Lima", "Bogota", "Nairobi", "Cape Town", "Marrakesh", "Tbilisi", "Reykjavik", "Valencia",
]
MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
    "November", "December",
]
SLOTS: dict[str, list[str]] = {
    "person": PEOPLE,
    "city": CITIES,
    "month": MONTHS,
    "quarter": ["Q1", "Q2", "Q3", "Q4"],
    "seat": ["A", "B", "C", "D", "E", "F"],
    "weekday": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
    "project": [
        "Atlas", "Beacon", "Cobalt", "Delta", "Ember", "Fjord", "Granite", "Harbor", "Iris", "Juniper", "Kestrel",
        "Lumen", "Meridian", "Nimbus", "Orchid", "Pioneer", "Quartz", "Riverbend", "Sequoia", "Tundra",
    ],
    "service": [
        "billing service", "auth gateway", "search API", "payments worker", "notification queue", "data pipeline",
        "mobile app", "admin dashboard", "export job", "ingest cluster", "reporting backend", "cache layer",
    ],
    "file": [
        "auth/session.py", "billing/invoice.ts", "api/routes.go", "core/retry.rs", "ui/Table.tsx", "db/migrate.sql",
        "jobs/export.py", "lib/cache.ts", "search/rank.py", "infra/main.tf", "config/settings.yaml", "web/app.js",
    ],
    "func": [
        "parse_header", "retry_with_backoff", "renderTable", "load_config", "merge_accounts", "computeTax",
        "flush_queue", "validate_token", "build_index", "resolveUser", "sync_calendar", "encode_payload",
    ],
    "remark": [
        "missing a test for the empty case", "swallows the timeout error", "holds the lock across a network call",
        "duplicates the parsing logic", "leaks a file handle on error", "uses a mutable default argument",
        "logs the access token", "has an off-by-one in the pagination", "needs a docstring",
        "should use the shared HTTP client", "recomputes the hash in a loop", "ignores the retry budget",
    ],
    "decision": [
        "move the release to the second week", "drop support for the old API", "keep Postgres instead of DynamoDB",
        "ship behind a feature flag", "freeze the schema until the audit", "hire a second designer",
        "rewrite the importer in Rust", "cut the scope to the two core reports",
        "switch the CI to self-hosted runners", "pay the vendor annually", "postpone the rebrand",
        "run the migration on a Sunday night",
    ],
    "topic": [
        "the roadmap", "the hiring plan", "the budget", "onboarding", "the incident review", "pricing",
        "the security audit", "the data retention policy", "the offsite", "the quarterly goals", "the API redesign",
        "vendor contracts", "the support backlog", "the launch checklist", "on-call rotation",
    ],
    "task": [
        "renewed the domain", "filed the expense report", "sent the invoice", "updated the runbook",
        "rotated the API keys", "closed the stale tickets", "backed up the laptop", "paid the electricity bill",
        "booked the car service", "cleaned up the shared drive", "submitted the tax form", "upgraded the database",
        "archived the old project", "wrote the release notes", "replied to the landlord",
    ],
    "item": [
        "a standing desk", "noise-cancelling headphones", "a mechanical keyboard", "running shoes", "a rice cooker",
        "a 27-inch monitor", "a winter jacket", "a coffee grinder", "hiking boots", "a bike helmet", "a tent",
        "an e-reader", "a cast iron pan", "a desk lamp", "a backpack", "a phone case", "a yoga mat",
    ],
    "shop": [
        "the hardware store", "an online shop", "the market", "the outlet mall", "a second-hand shop",
        "the bookshop on the corner", "the electronics store", "the pharmacy", "the garden centre",
    ],
    "specialty": [
        "dentist", "dermatologist", "physiotherapist", "eye doctor", "GP", "cardiologist", "allergist",
        "orthopedist", "ENT doctor", "nutritionist",
    ],
    "clinic": [
        "the clinic on Oak Street", "the health centre", "St. Mary's", "the walk-in clinic",
        "the university hospital", "the practice near the station",
    ],
    "health_note": [
        "blood pressure was normal", "the x-ray showed nothing", "needs a follow-up in six weeks",
        "prescribed ibuprofen for a week", "recommended stretching every morning", "the filling has to be redone",
        "cholesterol is slightly high", "the rash is an allergy to the detergent", "vision changed a little",
    ],
    "airline": ["TAP", "Lufthansa", "KLM", "Iberia", "easyJet", "Ryanair", "SAS", "Finnair", "Air France", "Swiss"],
    "hotel": [
        "a small hotel near the old town", "an apartment by the river", "the conference hotel", "a hostel downtown",
        "a guesthouse in the hills", "the airport hotel", "a friend's flat",
    ],
    "food": [
        "ramen", "tapas", "sushi", "a vegetarian thali", "grilled fish", "pasta", "dumplings", "tacos", "falafel",
        "a mushroom risotto", "pho", "a cheese platter", "pastel de nata",
    ],
    "hobby": [
        "bouldering", "running", "the piano", "pottery", "chess", "photography", "gardening", "swimming", "cycling",
        "woodworking", "baking bread", "learning Portuguese",
    ],
    "place": [
        "the office", "the coworking space", "the café downstairs", "the library", "home", "the lab",
        "the client's office", "the train", "the park",
    ],
    "role": [
        "the new engineering manager", "our designer", "the contractor", "the product lead", "the CFO",
        "my landlord", "my neighbour", "the recruiter", "my mentor", "the support lead", "my sister",
    ],
    "tool": [
        "Grafana", "Terraform", "Kubernetes", "Postgres", "Redis", "Kafka", "Figma", "Jira", "Sentry", "Airflow",
        "pytest", "Docker", "Vim", "Notion",
    ],
    "feeling": ["went well", "was tense", "ran long", "was short and useful", "got derailed", "was productive"],
}
TICKET_PREFIXES = ["OPS", "BUG", "FEAT", "SEC", "DATA", "WEB", "INFRA", "SUP"]

TEMPLATES: list[tuple[str, str, str]] = [
    ("work", "note",
     "Worked on {project} with {person} at {place}; the {service} now handles {num} requests a second."),
    ("work", "note", "Spent the morning debugging the {service}: {func} in {file} {remark}."),
    ("work", "note", "{person} says the {service} latency went from {num} ms to {num} ms after the {tool} change."),
    ("work", "note", "Pairing session with {person} on {project}, we traced the bug to {func} and fixed it."),
    ("work", "note", "The {service} dashboard in {tool} shows {pct} errors since the deploy of version {version}."),
    ("work", "task", "Done: {task} before the {weekday} deadline, took about {num} minutes."),
    ("work", "task", "Finished {ticket}: the {service} no longer retries forever; {person} reviewed it."),
    ("work", "task", "{task}; next I need to ping {person} about {topic} by {date}."),
    ("work", "task", "Closed {ticket} after {person} confirmed the fix in {project} on {date}."),
    ("decision", "decision", "Decided with {person} and {person} to {decision}, because of {topic}."),
    ("decision", "decision", "We agreed to {decision}; {role} will write it up by {date}."),
    ("decision", "decision", "Final call on {project}: {decision}. Revisit in {month} if the numbers change."),
    ("decision", "decision", "After the review of {topic} we chose to {decision} and keep {tool}."),
    ("meeting", "event",
     "Meeting with {person} about {topic} {feeling}; action items: {task} and a follow-up on {date}."),
    ("meeting", "event", "Weekly sync on {project}: {person} raised {topic}, {person} owns the next step."),
    ("meeting", "event", "1:1 with {person} on {weekday}: talked about {topic} and {hobby}; it {feeling}."),
    ("meeting", "event", "Planning meeting at {time} for {project}; {num} tickets estimated, {topic} left open."),
    ("meeting", "event", "Call with {role} about {topic}: they want an answer before {date}."),
    ("review", "note", "Code review for {person}: {func} in {file} {remark}."),
    ("review", "note", "Left {num} comments on the {project} pull request; the main one: {file} {remark}."),
    ("review", "note", "Reviewed {ticket}: approved after {person} fixed {func}, which {remark}."),
    ("travel", "event", "Flight to {city} with {airline} on {date} at {time}, seat {few}{seat}; staying at {hotel}."),
    ("travel", "event", "Trip to {city} for {project}: {few} nights at {hotel}, the team dinner was {food}."),
    ("travel", "event", "Booked a train from {city} to {city} on {date}, {amount} return."),
    ("travel", "event", "Back from {city}; the talk at the meetup {feeling} and {person} wants the slides."),
    ("travel", "task", "Renewed the passport for the {city} trip in {month}; it cost {amount}."),
    ("purchase", "event", "Bought {item} at {shop} for {amount}; the receipt is in the {month} folder."),
    ("purchase", "event", "Ordered {item} online for {amount}, arrives {weekday}; {person} recommended it."),
    ("purchase", "event", "Returned {item} to {shop}, refund of {amount} expected by {date}."),
    ("purchase", "note", "Monthly spend on groceries was {amount}, about {pct} more than in {month}."),
    ("health", "event", "Appointment with the {specialty} at {clinic} on {date} at {time}."),
    ("health", "health", "Saw the {specialty} at {clinic}: {health_note}."),
    ("health", "event", "Rescheduled the {specialty} appointment to {weekday} {date}; bring the insurance card."),
    ("health", "health", "{health_note}, said the {specialty}; next check in {month}."),
    ("people", "relationship", "{person} is {role}; met at {place} in {month}, likes {food} and {hobby}."),
    ("people", "note", "Had {food} with {person} in {city}; they moved there in {month} and work on {topic}."),
    ("people", "relationship", "{person}'s birthday is on {date}; last year we gave them {item}."),
    ("people", "note", "{person} recommended {tool} for {project}; {person} was less sure."),
    ("places", "note", "The café near {place} in {city} has good {food}, opens at {time}, closed on {weekday}."),
    ("places", "note", "Found a quiet place to work in {city}: {place}, wifi fine, about {amount} a day."),
    ("personal", "preference", "I prefer {food} over {food} on weekdays, and no meetings before {time}."),
    ("personal", "note", "Went {hobby} with {person} on {weekday}; {few} km, tired but happy."),
    ("personal", "note", "Started {hobby} again in {month}; {few} sessions so far, {person} joins on {weekday}s."),
    ("personal", "task", "Paid {amount} for the {hobby} course; it starts {date} at {time}."),
    ("numbers", "note", "{quarter} numbers for {project}: revenue {amount}, churn {pct}, {num} new customers."),
    ("numbers", "note", "The {service} bill for {month} was {amount}, {pct} over budget because of {tool}."),
    ("numbers", "note", "Load test: {num} users, p99 {num} ms on the {service}, CPU at {pct}."),
    ("incident", "event", "Incident {ticket}: the {service} was down {num} minutes on {date}; root cause in {func}."),
    ("incident", "note", "Postmortem with {person}: {remark} in {file} caused the outage; {task} as follow-up."),
    ("home", "task", "{task}; the plumber comes {weekday} at {time}, quoted {amount}."),
    ("home", "note", "The landlord agreed to fix the heating before {date}; rent stays at {amount}."),
    ("learning", "note", "Read about {tool} internals; {person}'s talk on {topic} explained {func} well."),
    ("learning", "note", "Course notes, week {few}: {topic} and how {tool} handles it."),
]
EXTRAS = [
    "{person} agreed.", "Follow up on {date}.", "Ask {person} about it on {weekday}.", "Took about {num} minutes.",
    "Cost {amount} in the end.", "Remind me in {month}.", "It was raining in {city}.", "Not urgent.",
    "Check again next {weekday}.", "{person} was there too.", "Budget left: {amount}.", "Noted in {tool}.",
    "See {ticket} for details.", "Around {time}.", "Everyone seemed fine with it.", "Worth doing again.",
]
OPENERS = ["Note: ", "Update: ", "Reminder: ", "Again, ", "FYI ", "Quick note, ", "Log: ", "Recap: "]
SOURCES = ["chat", "email", "calendar", "slack", "notes app", "voice memo", "github"]
KEYWORDS = sorted(
    {
        *SLOTS["specialty"],
        *SLOTS["airline"],
        *SLOTS["tool"],
        *SLOTS["project"],
        *CITIES[:30],
        "flight", "invoice", "refund", "birthday", "deadline", "incident", "outage", "review", "budget", "hotel",
        "appointment", "receipt", "rent", "release", "migration", "passport", "dinner", "course", "meeting",
    }
)
DURABLE = frozenset({"identity", "preference", "constraint", "relationship", "health"})
PEOPLE_SET = frozenset(PEOPLE)
CITY_SET = frozenset(c for c in CITIES if " " not in c)
MONTH_SET = frozenset(MONTHS)
WEEKDAY_SET = frozenset(SLOTS["weekday"])
# fmt: on
