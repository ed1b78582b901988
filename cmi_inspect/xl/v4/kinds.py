"""Types of XL v4 slot values, and how a question types its value (wh-word, head noun, verb)."""

from __future__ import annotations

import datetime as dt
import re
from functools import cache

from cmi_inspect.text import NUMBER_WORDS
from cmi_inspect.xl.v4.lexicon import LEXICON

TYPES = (*LEXICON, "count", "duration", "other")
"""Every type ``value_type`` returns; counts and durations change their number instead."""

NAME_TYPES = frozenset(
    {"person", "pet_name", "city", "country", "language", "book_or_title", "game", "place",
     "band", "superhero", "car", "breed", "team", "song", "musician", "programming_language"}
)  # fmt: skip
"""Types whose values may be proper names: a capitalised value gets a capitalised one."""
NUMBERED = frozenset({"count", "duration"})
"""Types whose false value is the true one with another number."""
ADJECTIVES = frozenset({"feeling", "description", "trait"})
"""Types whose values are adjectives ("excited", "peaceful and awesome")."""
TITLED = frozenset({"food", "flower", "drink", "pizza", "meat"})
"""Common types whose values a turn may write in capitals ("Chicken Pot Pie")."""
VALUE_TYPED = (
    "city", "country", "language", "instrument", "animal", "flower", "disaster", "ailment",
    "activity", "quality", "place", "event", "food",
)  # fmt: skip
"""Types a value is of by itself, as a lexicon entry, whatever its question asks."""

_OPENINGS = {"how many": "count", "how much": "count", "how old": "count",
             "how long": "duration", "how often": "frequency", "when": "date",
             "what year": "date", "which year": "date", "where": "place", "who": "person",
             "whom": "person"}  # fmt: skip
"""Question openings that fix the type whatever the head noun."""

_HEADS: dict[str, str] = {
    **dict.fromkeys(("place", "places", "area", "areas", "location", "locations", "spot",
                     "spots", "destination", "destinations", "region", "venue", "state",
                     "states", "shelter", "shelters", "setting"), "place"),
    **dict.fromkeys(("city", "cities", "town", "towns"), "city"),
    **dict.fromkeys(("country", "countries", "nation"), "country"),
    **dict.fromkeys(("activity", "activities", "hobby", "hobbies", "pastime", "arts", "habit",
                     "habits", "passion", "interest", "interests"), "activity"),
    **dict.fromkeys(("sport", "sports", "exercise", "exercises", "workout", "workouts"),
                    "exercise"),
    **dict.fromkeys(("class", "classes", "course", "courses", "lesson", "lessons",
                     "workshop", "workshops"), "course"),
    **dict.fromkeys(("food", "foods", "dish", "dishes", "dessert", "desserts", "meal",
                     "meals", "recipe", "recipes", "treat", "treats", "snack", "snacks",
                     "dinner", "breakfast", "lunch", "cuisine", "pastry", "pastries"), "food"),
    **dict.fromkeys(("flavor", "flavors", "flavour", "ingredient", "ingredients", "spice",
                     "spices", "filling", "topping", "herb", "frosting"), "ingredient"),
    **dict.fromkeys(("pet", "pets", "animal", "animals"), "animal"),
    **dict.fromkeys(("breed", "breeds"), "breed"),
    **dict.fromkeys(("instrument", "instruments"), "instrument"),
    **dict.fromkeys(("language", "languages"), "language"),
    **dict.fromkeys(("color", "colour", "colors", "colours"), "color"),
    **dict.fromkeys(("job", "jobs", "profession", "occupation"), "occupation"),
    **dict.fromkeys(("item", "items", "gift", "gifts", "present", "souvenir", "souvenirs"),
                    "object"),
    **dict.fromkeys(("book", "books", "novel", "novels", "movie", "movies", "film", "films",
                     "show", "shows", "series", "album", "poem"),
                    "book_or_title"),
    **dict.fromkeys(("game", "games"), "game"),
    **dict.fromkeys(("band", "bands"), "band"),
    **dict.fromkeys(("superhero", "superheroes"), "superhero"),
    **dict.fromkeys(("car", "cars"), "car"),
    **dict.fromkeys(("genre", "genres"), "genre"),
    **dict.fromkeys(("event", "events", "party", "fundraiser", "festival", "competition",
                     "contest", "race", "celebration"), "event"),
    **dict.fromkeys(("flower", "flowers"), "flower"),
    **dict.fromkeys(("design", "designs"), "scene"),
    **dict.fromkeys(("song", "songs", "piece", "pieces", "track", "tracks", "tune", "tunes"),
                    "song"),
    **dict.fromkeys(("writing", "writings"), "writing"),
    **dict.fromkeys(("trick", "tricks"), "trick"),
    **dict.fromkeys(("bird", "birds"), "bird"),
    **dict.fromkeys(("meat", "meats"), "meat"),
    **dict.fromkeys(("status",), "status"),
    **dict.fromkeys(("team", "teams", "club", "clubs"), "team"),
    **dict.fromkeys(("pose", "poses"), "yoga_pose"),
    **dict.fromkeys(("pizza", "pizzas"), "pizza"),
    **dict.fromkeys(("business", "venture"), "business"),
    **dict.fromkeys(("beer", "drink", "drinks", "coffee", "tea", "wine", "cocktail", "water",
                     "juice", "soda"), "drink"),
    **dict.fromkeys(("cause", "causes"), "cause"),
    **dict.fromkeys(("topic", "topics", "subject", "subjects"), "topic"),
    **dict.fromkeys(("disaster", "disasters"), "disaster"),
    **dict.fromkeys(("ailment", "illness", "condition", "injury", "disease", "issue"),
                    "ailment"),
    **dict.fromkeys(("emotion", "emotions", "feeling", "feelings", "mood", "attitude",
                     "reaction"), "feeling"),
    **dict.fromkeys(("trait", "traits"), "trait"),
    **dict.fromkeys(("position",), "position"),
    **dict.fromkeys(("value", "values"), "quality"),
    **dict.fromkeys(("artist", "artists", "musician", "musicians", "singer", "singers",
                     "composer", "composers"), "musician"),
    **dict.fromkeys(("friend", "friends", "mentor", "partner", "author", "authors", "character",
                     "people", "child", "children", "kids", "son", "daughter", "member",
                     "members", "nickname"), "person"),
}  # fmt: skip
"""Head nouns of "What/Which <noun> ..." questions, and the type each asks for."""

_KIND_OF = {"book": "genre", "books": "genre", "movie": "genre", "movies": "genre",
            "film": "genre", "films": "genre", "novel": "genre", "novels": "genre",
            "music": "music_genre", "dance": "dance_style", "game": "sport", "games": "sport",
            "car": "car", "yoga": "yoga_style", "pottery": "pottery", "cookies": "food",
            "cake": "food", "cakes": "food", "bread": "food", "soup": "food",
            "pie": "food"}  # fmt: skip
"""Heads that ask for a kind, not a title, after "kind/type/style/genre of"."""

_VERBS = {
    **dict.fromkeys(("make", "made", "buy", "bought", "receive", "received", "get", "got",
                     "give", "gave", "donate", "donated", "build", "built", "create",
                     "created", "find", "found", "collect", "knit", "sew", "carve", "craft",
                     "win", "won", "design", "designed", "bring", "brought"), "object"),
    **dict.fromkeys(("paint", "painted", "painting", "draw", "drew", "photograph",
                     "photographed"), "scene"),
    **dict.fromkeys(("watch", "watched", "read", "reread", "recommend", "recommended"),
                    "book_or_title"),
    **dict.fromkeys(("open", "opened", "opening"), "business"),
    **dict.fromkeys(("cook", "cooked", "bake", "baked", "eat", "ate", "prepare", "prepared"),
                    "food"),
    **dict.fromkeys(("adopt", "adopted"), "animal"),
    **dict.fromkeys(("organize", "organized", "host", "hosted", "attend", "attended"), "event"),
}  # fmt: skip
"""Verbs of "What did X <verb>?" whose object has a type."""
_DOING = frozenset(
    {"enjoy", "enjoys", "enjoyed", "like", "likes", "love", "loves", "try", "tried",
     "start", "started", "learn", "learned", "learning", "teach", "teaching", "practice",
     "relax", "destress", "passionate", "hobby", "habit", "habits", "suggest",
     "suggested", "exercises", "play", "plays", "peace", "calming"}
)  # fmt: skip
"""Question words after which a gerund answer ("reading") is an activity."""
_MUSIC = frozenset({"music", "concert", "band", "song", "songs", "album", "perform", "performed",
                    "sing", "sang", "headlined"})  # fmt: skip
"""Words by which a "Who" question asks for a musician."""
_SPORTS = frozenset({"football", "soccer", "basketball", "baseball", "hockey", "club", "team",
                     "match", "matches"})  # fmt: skip
"""Words by which a "Who" question asks for a team ("Who does James support in football
matches?")."""
_PET_WORDS = frozenset({"dog", "dogs", "cat", "cats", "pet", "pets", "puppy", "puppies", "pup",
                        "pups", "kitten", "turtle", "turtles", "horse", "rabbit", "bird",
                        "snake", "snakes"})  # fmt: skip
_AUX = frozenset({"did", "does", "do", "is", "was", "are", "were", "has", "have", "had",
                  "will", "would", "can", "could", "should", "might"})  # fmt: skip
_CUTS = frozenset({"towards", "toward", "regarding", "besides", "between", "over", "around",
                   "through", "than", "since", "while", "where", "when", "whose", "whom",
                   "helps", "makes", "gives", "fuels", "brings", "keeps", "motivates",
                   "inspires", "impresses", "connects", "mesmerizes", "stimulates"})  # fmt: skip
"""Words a head noun phrase ends before, beyond prepositions and auxiliary verbs."""
_GENERIC_HEADS = frozenset({"recommendation", "recommendations", "brand", "figure", "figures"})
"""Head nouns that say nothing of the type: the word before them does ("book
recommendations", "car brand", "superhero toy figure")."""
_PREPOSITIONS = frozenset({"of", "in", "on", "at", "to", "for", "with", "from", "by", "about",
                           "during", "after", "before", "into", "near", "like", "as"})  # fmt: skip
_ARTICLES = frozenset({"a", "an", "the"})
_RELATIVES = frozenset({"that", "which", "who", "or"})
_CLAUSE_WORDS = frozenset(
    {"i", "you", "he", "she", "it", "we", "they", "him", "her", "his", "hers", "its", "our",
     "their", "them", "my", "your", "me", "us", "is", "are", "was", "were", "be", "been",
     "am", "has", "have", "had", "do", "does", "did", "will", "would", "can", "could",
     "to", "not", "that", "which", "who", "what", "because", "so", "if", "when", "by",
     "she's", "he's", "it's", "they're", "i'm", "some", "all", "more", "most", "very"}
)  # fmt: skip
"""Words that make a value a clause, not a thing of a type."""
_CONNECTORS = frozenset({"of", "the", "and", "a", "an", "in", "on", "with", "to", "for", "at"})
_NOT_GERUNDS = frozenset(
    {"morning", "evening", "thing", "nothing", "something", "everything", "building",
     "wedding", "ceiling", "feeling", "clothing", "spring", "string", "sibling", "during",
     "pudding", "icing", "frosting", "stuffing", "filling", "meaning", "ending", "beginning",
     "timing", "setting", "lightning", "warning", "earring", "offspring"}
)  # fmt: skip
_ADJECTIVE_END = ("ed", "ful", "ous", "ive", "ing", "al", "ic", "y", "less", "ble", "ant", "ent")
_QUALITY_END = ("ness", "ity", "ion", "ship", "ence", "ance", "dom", "th", "ment", "ism")
_PLACE_NOUNS = frozenset(
    {"shelter", "church", "studio", "school", "center", "centre", "office", "hospital", "store",
     "shop", "market", "beach", "mountains", "mountain", "forest", "trail", "lake", "island",
     "coast", "city", "town", "village", "park", "restaurant", "cafe", "gym", "home", "woods",
     "greenhouse", "camp", "farm", "library", "beaches", "cafes", "parks", "festival",
     "concert", "convention", "fair", "bar", "museum"}
)  # fmt: skip
"""Last words of a lower-case place ("homeless shelter"), beyond the lexicon's."""

MAX_WORDS = {"book_or_title": 6, "frequency": 6, "date": 6}
"""Longest value (words, without article) a type takes; 4 for the rest."""
ANCHOR = dt.date(2023, 7, 1)
"""A day to compare relative phrases on: both sides resolve from it, so it cancels."""
DAY_MARGIN = 14
"""A false day lies at least this many days outside the gold answer's period."""
DAY_REACH = 120
"""... and at most this many from the true day, so that it stays plausible."""

_WORD = re.compile(r"[\w'+-]+")
_UNIT = r"(?P<unit>second|minute|hour|day|week|weekend|month|year)s?"
_NUMBER_RE = rf"\d+|{'|'.join(NUMBER_WORDS)}"
_COUNT = re.compile(rf"(?<![\w-])(?P<n>{_NUMBER_RE})(?![\w-])", re.IGNORECASE)
_DURATION = re.compile(
    rf"\b(?P<n>{_NUMBER_RE}|a few|a couple of|several|an|a)\s+(?:[a-z-]+\s+)?{_UNIT}\b",
    re.IGNORECASE,
)
_VAGUE = {"a few": (2, 4), "a couple of": (2, 2), "several": (3, 5), "an": (1, 1), "a": (1, 1)}
_FREQUENCY = re.compile(r"\b(?:once|twice|times|every|daily|weekly|monthly|while)\b", re.I)
_PREFIX = re.compile(r"^(?:(?P<prep>in|at|on|near|to|from)\s+)?(?:(?P<art>a|an|the)\s+)?", re.I)
_QUOTES = "\"'“”‘’"


def _words(text: str) -> list[str]:
    """The text's words, lower-cased, a possessive kept ("caroline's", "pets")."""
    return [w.strip("'") for w in _WORD.findall(text.lower().replace("’", "'"))]


@cache
def _vocabulary(kind: str) -> frozenset[str]:
    """Every word of the type's lexicon, lower-cased."""
    return frozenset(w for value in LEXICON.get(kind, ()) for w in _words(value))


@cache
def _entries(kind: str) -> frozenset[str]:
    """The type's lexicon entries, lower-cased."""
    return frozenset(v.lower() for v in LEXICON.get(kind, ()))


def _question_type(question: str) -> str | None:
    """The type a question asks for, from its opening, head noun or verb; None if unsure."""
    q = re.sub(r"^according to \S+ ", "", " ".join(_words(question)))
    words = q.split()
    if "name" in words or "names" in words:
        return _named(words)
    if re.search(r"\breaction\b", q):
        return "feeling"
    if re.match(r"how (?:did|does|do|would|was|is) .*\bdescribe|how (?:was|is) ", q):
        return "description"
    if re.search(r"\bsymboli[sz]e|\brepresent|\bremind", q):
        return "quality"
    if re.search(r"\bawareness (?:for|of|about)\b", q):
        return "cause"
    if re.search(r"\ballergic to\b", q):
        return "allergen"
    if re.search(r"\bdiscuss\b|\b(?:chat|chatted|talk|talked|blog|blogging) about\b", q):
        return "topic"
    if re.search(r"\bcalled\b", q):
        return "book_or_title"
    for opening, kind in _OPENINGS.items():
        if re.match(rf"(?:in |at |from |for |to )?{opening}\b", q):
            return _who(words) if kind == "person" else kind
    if re.search(r"\bnumber of\b", q):
        return "count"
    head = _head_type(words)
    if head is None and re.search(r"\b(?:feel|feels|felt|react|reacted)\b", q):
        return "feeling"
    return head


def _who(words: list[str]) -> str:
    """The type a "Who" question asks for: a musician, a team, or a person."""
    if _MUSIC & set(words):
        return "musician"
    return "team" if _SPORTS & set(words) else "person"


def _named(words: list[str]) -> str | None:
    """The type of a "What is the name of ..." question: a pet's, a person's, a game's..."""
    if _PET_WORDS & set(words):
        return "pet_name"
    after = words[words.index("of") + 1 :] if "of" in words else []
    return next((_HEADS[w] for w in after if w in _HEADS), None)


def _head_type(words: list[str]) -> str | None:
    """The type a "What/Which <head> ..." question's head noun (or its verb) asks for."""
    if words[:1] in (["in"], ["at"]):
        words = words[1:]
    if words[:1] not in (["what"], ["which"]):
        return None
    region = _until_verb(words[1:])
    if region:
        return _region_type(region)
    if words[1:2] in (["is"], ["are"], ["was"], ["were"]):
        if words[2:3] in (["a"], ["an"], ["the"], ["some"], ["one"]):
            return _region_type(_until_verb(words[3:]))
        return _possessed_type(words) or _verb_type(words)
    return _verb_type(words)


def _until_verb(words: list[str]) -> list[str]:
    """The words before the first verb (an auxiliary, a past tense: "What natural disaster
    affected ...") or relative pronoun."""
    region = []
    for word in words:
        past = bool(re.fullmatch(r"[a-z]{3,}(?<!e)ed", word)) and word not in _HEADS
        if word in _AUX or word in _RELATIVES or word in _VERBS or word in _CUTS or past:
            break
        region.append(word)
    return region


def _region_type(region: list[str]) -> str | None:
    """The type the head noun (the last word) of the words between "what" and the verb
    asks for, up to a preposition other than "of" ("kind of books": genre; "favorite book
    series": a title; "healthy food suggestions": none); the first known noun of a long
    run, which holds more than the head."""
    cuts = _PREPOSITIONS - {"of"} | _CUTS
    cut = next((i for i, w in enumerate(region) if w in cuts), len(region))
    region = region[:cut]
    kind_of = any(w in ("kind", "kinds", "type", "types", "sort", "style", "genre") for w in region)
    head = region
    if "of" in region:
        before, after = region[: region.index("of")], region[region.index("of") + 1 :]
        head = after if kind_of or not before else before
    if head[-1:] and head[-1] in _GENERIC_HEADS or len(head) > 3:  # "items des John mention"
        head = [w for w in head if w in _HEADS][:1]
    if not head:
        return None
    if kind_of and head[-1] in _KIND_OF:
        return _KIND_OF[head[-1]]
    if "programming" in head and head[-1] in ("language", "languages"):
        return "programming_language"
    return _HEADS.get(head[-1])


def _possessed_type(words: list[str]) -> str | None:
    """The type of "What is X's [favorite] <head> ..."."""
    owner = next((i for i, w in enumerate(words) if w.endswith("'s")), None)
    return None if owner is None else _region_type(_until_verb(words[owner + 1 :]))


def _verb_type(words: list[str]) -> str | None:
    """The type of "What did X <verb>?" for a verb whose object has one ("a photo of": a
    scene)."""
    if words[1:2] not in (["did"], ["does"], ["has"], ["have"], ["do"], ["is"], ["was"]):
        return None
    if re.search(r"\b(?:photo|picture|painting)s? of\b", " ".join(words)):
        return "scene"
    return next((_VERBS[w] for w in words[2:] if w in _VERBS), None)


def _value_type(question: str, core: str) -> str | None:
    """The type a value is of by itself: an entry of an unambiguous type's lexicon (or an
    event or a place ending in one: "a 5K charity run"), or a gerund ("reading") where the
    question asks what someone does."""
    low = core.lower()
    parts = low.split(" and ")
    kind = next((k for k in VALUE_TYPED if all(p in _entries(k) for p in parts)), None)
    tails = {" ".join(low.split()[-n:]) for n in (1, 2)}
    kind = kind or next((k for k in ("event", "place", "drink") if tails & _entries(k)), None)
    if kind is not None:
        return kind
    words = low.split()
    if len(words) == 1 and words[0].endswith(("ness", "ity", "ship")):
        return "quality"
    if words and _gerund(words[0]) and len(words) <= 3:
        q = question.lower()
        does = re.search(r"\b(?:did|does|do)\b.*\bdo\b", q)  # "What does X do to ...?"
        doing = _DOING & set(_words(question)) or q.startswith("how") or does
        if doing:
            return "activity"
    return None


_TOPPINGS = frozenset({"frosting", "filling", "topping", "sauce", "glaze", "syrup", "icing"})
_COURSE_HEADS = frozenset(
    {"class", "classes", "course", "courses", "workshop", "workshops", "lesson", "lessons"}
)  # fmt: skip


def _gerund(word: str) -> bool:
    """True for a verb's -ing form ("reading"), not a noun ending so ("morning")."""
    return word.endswith("ing") and len(word) > 5 and word not in _NOT_GERUNDS
