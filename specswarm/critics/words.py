"""The word lists the critics read: English function words, planning and process vocabulary,
units and currencies. None of them names a place, product or domain; ``NAME_HEADS`` is generic
toponymy ("Mount", "Temple", "Park"). Everything here is data, no logic.
"""

from __future__ import annotations


def _ws(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS = _ws("""
a about above after again against all also am an and any are as at be been before being below
between both but by can could did do does doing down during each either every few for from further
had has have having he her here hers him his how i if in into is it its itself just me more most my
neither no nor not of off on once only or other our ours out over own same she should so some such
than that the their theirs them then there these they this those through to too under until up upon
very was we were what when where which while who whom whose why will with would you your yours via
per within without must may might shall us let lets etc e.g i.e vs versus towards toward onto near
across among around along beyond throughout like based according depending regarding concerning
""")
"""English function words, and the participles that work as prepositions ("based on",
"depending on"): two titles that both say "based on" share no content."""

VERBS = _ws("""
plan visit explore organize organise prepare arrange book define write draft create make set do
handle manage review decide choose select pick find get go take enjoy experience discover see try
attend hold run start begin finish complete finalize finalise coordinate schedule implement develop
specify document describe outline identify determine establish ensure provide support include add
improve check confirm secure obtain spend stay continue wrap use work hire buy order pay sign build
design test deploy launch learn study research meet reach collect gather list
""")
"""Planning verbs: filler in the imperative position ("*Book* the venue", "Plan and *book*",
"how to *test*"), content elsewhere ("Endpoints for *books*", "Unit *tests*")."""

ACTIONS = _ws("""
download upload collect clean annotate label train evaluate analyse analyze model measure survey
interview recruit install configure migrate deploy monitor tune optimize optimise refactor benchmark
validate verify audit publish release announce promote advertise print ship package pack unpack paint
sand demolish remove replace repair fix purchase rent cook bake taste rehearse practise practice
record edit mix translate proofread revise submit present teach grade assess compare shortlist
negotiate photograph film decorate inspect apply register enrol enroll import export parse index
encrypt back cache sync merge archive transcribe code score reconcile invoice file
""")
"""Process verbs: two titles that begin with *different* ones act differently on what they
share ("Download EPA AirData" / "Clean the EPA AirData records"), so what they share is a
frame. Planning verbs (visit, explore, book) are not actions: "Visit Lisbon" / "Explore
Lisbon's food" plan the same place twice."""

FILLER = _ws("""
planning preparation preparations arrangement arrangements organisation organization management
setup overview summary introduction intro detail details goal goals activity activities option
options thing things item items task tasks step steps stage stages phase phases part parts section
sections aspect aspects area areas trip trips tour tours plan plans
day days night nights hour hours minute minutes week weeks month months year years
morning afternoon evening noon midday breakfast lunch dinner daily weekly
first second third fourth fifth last next final initial overall main key basic whole full entire
extra additional simple quick short long half
one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen
seventeen eighteen nineteen twenty thirty forty fifty hundred thousand couple several
potential possible prospective identified selected chosen relevant appropriate suitable necessary
required needed respective existing
""")
"""Planning nouns, time units, times of day, ordinals, number words and hedges that choose
without naming ("potential sponsors", "identified sponsors", "suitable venues"): never content."""

VAGUE = _ws("""
misc miscellaneous other others various etc stuff general things thing sundry assorted everything
something anything remaining rest leftover leftovers tbd
""")
"""Words that signal a child with no real content."""

RESTATING = _ws("""
mechanism mechanisms process processes overview details detail system systems management approach
approaches strategy strategies implementation handling basics fundamentals introduction summary
concept concepts logic method methods procedure procedures aspects aspect part parts phase stage
specification specifications spec specs definition definitions description outline requirements
stages step steps section sections component components module modules feature features
measures
""")
"""Generic heads that add nothing to the words before them: "Conflict Resolution Mechanism" under
"Conflict Resolution" restates its parent (the repeats check)."""

CALENDAR = _ws("""
january february march april june july august september october november december jan feb mar apr
jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday weekend
weekends weekday weekdays spring summer autumn fall winter season today tomorrow tonight
""")
"""Dates are when, not what."""

NAME_HEADS = _ws("""
mount mt mountain mountains lake river park street st avenue ave road station temple temples shrine
shrines museum gallery castle palace church cathedral basilica chapel abbey university college school
hotel hostel airport bay beach island islands hall center centre market square plaza tower bridge gate
garden gardens national city town village old new north south east west northern southern eastern
western upper lower great grand royal central san santa santo saint fort port valley falls hill hills
district quarter province region county state republic kingdom united international conference
festival institute foundation company inc ltd co corp team group library theatre theater stadium arena
zoo aquarium opera house club restaurant cafe bar lab department ministry office committee council
association society trail peak pass coast cape desert forest sea ocean lagoon canyon glacier volcano
cave
""")
"""Heads of place and institution names: part of a name, never its key."""

CONNECTORS = _ws("of de di da del della la le les du des van von der den y the")

"""Words that may join the parts of a name ("Palace of Westminster", "Rio de Janeiro")."""

DEMONYMS = _ws("""
french dutch swiss thai greek czech irish welsh scots scottish spanish english turkish polish danish
finnish swedish norwegian korean european american african asian mexican peruvian moroccan arab arabic
latin japanese chinese vietnamese portuguese german italian indian israeli pakistani iraqi british
""")
"""Adjectives of nations and languages (weak names); words ending -ese/-ian/-ish are also."""

MOVEMENT = _ws("""
travel travels traveling travelling transfer transfers return returns returning back commute fly
flying flight flights drive driving ride train trains bus ferry route routes journey move moving head
heading arrive arriving arrival land landing depart departing departure shuttle transport transit
connection connections connect migrate migrating migration ship shipping send sending deliver delivery
get getting way
""")
"""Words after which "to X" / "in X" names an endpoint, not the subject."""

ENDPOINT_PREP = _ws("from via between")
"""Prepositions after which a name is an endpoint of a movement."""
TARGET_PREP = _ws("to into towards toward in at")
"""Prepositions that make an endpoint after a movement word ("return *to* Tokyo")."""

NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "ninety": 90,
    "half": 0.5,
}


UNIT_WORDS: dict[str, str] = {}
for _unit, _forms in {
    "minutes": "minute minutes min mins",
    "hours": "hour hours hr hrs h",
    "days": "day days",
    "nights": "night nights",
    "weeks": "week weeks wk wks",
    "months": "month months",
    "years": "year years yr yrs",
}.items():
    for _f in _forms.split():
        UNIT_WORDS[_f] = _unit

CURRENCY_WORDS = {
    "eur": "EUR",
    "euro": "EUR",
    "euros": "EUR",
    "€": "EUR",
    "usd": "USD",
    "dollar": "USD",
    "dollars": "USD",
    "$": "USD",
    "gbp": "GBP",
    "£": "GBP",
    "jpy": "JPY",
    "yen": "JPY",
    "¥": "JPY",
    "chf": "CHF",
}

MONEY_WORDS = _ws("budget cost costs price prices spend spending fee fees amount money")
"""A fact named with one of these (and no currency) is an amount of money."""


INTENSIVE = _ws("""
people persons person guests guest attendees attendee participants headcount capacity size priority
level rating score rank order index id version age percent pct rate ratio max min maximum minimum per
avg average mean start end date deadline due number no
""")
"""Fact-name words of quantities that do not split among children (200 guests are not 50+150)."""

ORDINAL_KEYS = _ws("day week month year hour night")
"""A fact named exactly ``day`` (singular) is an ordinal label (day 3 of the trip), not a duration."""
