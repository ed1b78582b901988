"""False values of XL v4: a value of the slot's semantic type that fits where the true one
stands in its sentence, and a false day outside the gold answer's period.

v3 swapped an answer for another answer of the same LoCoMo category, which read as
nonsense ("hit by a nasty pizza"). v4 types a slot value by its question's wh-word, head
noun or verb, and by its form (``value_type``), and draws a false value of that type
(``false_value``) from the LoCoMo answers whose questions type the same way and from a
small typed lexicon (``LEXICON``), in the true value's shape: as many words (within one),
the same capitals, article and number. A count or a duration keeps its written form and
changes its number; a date moves out of the gold answer's period (``false_day``).

Given the sentence the value stands in, ``false_value`` also reads how the sentence uses
it ("an awesome painting" is no activity, "a camping trip" wants an outing) and keeps
only values that ``fits`` it (no "a iguana", "a kittens", "the New Orleans"). ``TYPES``
lists the types; LoCoMo's answers join the pool only for the types whose answers are
reliable (``POOLED``): names, dishes, events, activities, frequencies and dates.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from functools import cache

from cmi_inspect.dates import date_mentions, date_spans
from cmi_inspect.dates.spans import DaySpan
from cmi_inspect.text import NUMBER_WORDS
from cmi_inspect.xl.answers import answer_items, same_value, stems
from cmi_inspect.xl.locomo import Conversation

LEXICON: dict[str, tuple[str, ...]] = {
    "place": (
        "beach", "lake", "park", "library", "museum", "gym", "cafe", "bakery", "community center",
        "farmers market", "mountains", "forest", "countryside", "campsite", "river", "harbor",
        "art gallery", "bookstore", "garden", "zoo", "aquarium", "stadium", "theater",
        "coffee shop", "youth center", "animal shelter", "swimming pool", "botanical garden",
        "national park", "train station", "hiking trail", "lakeside cabin", "city park",
        "Norway", "Portugal", "Canada", "Japan", "Ireland", "Mexico", "Italy", "Greece",
        "Iceland", "Peru", "Denver", "Lisbon", "Boston", "Toronto", "Dublin", "Madrid", "Vienna",
        "Austin", "Nashville", "Oregon", "Colorado", "Vermont", "Arizona", "Montana", "Maine",
        "New Mexico", "San Diego", "New Orleans", "Cape Cod", "Lake Tahoe",
    ),
    "city": (
        "Lisbon", "Denver", "Boston", "Toronto", "Vancouver", "Dublin", "Madrid", "Berlin",
        "Vienna", "Prague", "Austin", "Portland", "Atlanta", "Nashville", "Melbourne", "Montreal",
        "Amsterdam", "Copenhagen", "Florence", "Kyoto", "Budapest", "Oslo", "San Diego",
        "New Orleans", "Salt Lake City", "Cape Town", "Buenos Aires", "Mexico City", "Paris",
        "Rome", "London", "Tokyo", "Seattle", "Chicago", "Miami", "New York", "Barcelona",
        "Edinburgh", "San Francisco", "Los Angeles", "Sydney", "Detroit",
    ),
    "country": (
        "Norway", "Portugal", "Canada", "Japan", "Ireland", "Mexico", "Brazil", "Italy", "Greece",
        "Iceland", "Kenya", "Peru", "Chile", "Vietnam", "Thailand", "Australia", "Germany",
        "Denmark", "Finland", "Poland", "Argentina", "Morocco", "Croatia", "Austria", "Belgium",
        "New Zealand", "South Korea", "Costa Rica", "Sweden", "Spain", "France", "England",
        "Scotland", "Switzerland", "Netherlands", "India", "China", "Egypt", "Turkey",
        "Colombia", "Indonesia",
    ),
    "activity": (
        "hiking", "swimming", "cycling", "rock climbing", "kayaking", "gardening", "baking",
        "knitting", "painting", "pottery", "photography", "yoga", "dancing", "running",
        "surfing", "skateboarding", "birdwatching", "fishing", "archery", "sailing",
        "journaling", "woodworking", "tennis", "volleyball", "bowling", "ice skating",
        "snorkeling", "scrapbooking", "calligraphy", "pilates", "rowing", "trail running",
        "salsa dancing", "boxing", "table tennis", "basketball", "soccer", "baseball", "golf",
        "badminton", "karate", "judo", "meditation", "chess", "crochet", "sketching",
        "reading", "cooking", "writing", "drawing", "singing", "walking", "jogging",
        "traveling", "biking", "skiing", "snowboarding", "climbing", "gaming", "sewing",
        "quilting", "volunteering", "horseback riding", "weight training", "kickboxing",
        "taekwondo", "camping",
    ),
    "outing": (
        "hiking", "fishing", "kayaking", "camping", "skiing", "sailing", "biking", "surfing",
        "snorkeling", "climbing", "rock climbing", "birdwatching", "cycling", "rowing",
        "snowboarding", "canoeing", "rafting", "scuba diving",
    ),
    "exercise": (
        "hiking", "swimming", "cycling", "rock climbing", "kayaking", "yoga", "dancing",
        "running", "surfing", "pilates", "rowing", "boxing", "tennis", "jogging", "skiing",
        "weight training", "kickboxing", "volleyball", "basketball", "soccer", "walking",
        "spinning", "stretching", "climbing", "skating",
    ),
    "course": (
        "pottery", "photography", "calligraphy", "sculpture", "first aid", "woodworking",
        "drawing", "creative writing", "public speaking", "bookkeeping", "pottery class",
        "dance class", "cooking class", "art class", "photography course", "first aid course",
        "baking class", "language course", "woodworking class", "writing workshop",
        "pottery classes", "dance classes", "cooking classes", "art classes", "swimming lessons",
        "guitar lessons", "baking classes", "drawing lessons",
    ),
    "food": (
        "lasagna", "banana bread", "apple pie", "tomato soup", "pancakes", "fried rice",
        "vegetable curry", "chicken stew", "lemon tart", "carrot cake", "pumpkin pie",
        "veggie burgers", "tacos", "spaghetti", "pot roast", "chili", "quesadillas", "brownies",
        "cookies", "cinnamon rolls", "mushroom risotto", "lentil soup", "fruit salad",
        "cheesecake", "peach cobbler", "meatballs", "waffles", "muffins", "apple crumble",
        "potato salad", "shrimp pasta", "beef stew", "omelette", "stir-fry", "ice cream",
        "lemon sorbet", "fruit tart", "frozen yogurt", "rice pudding", "candy", "chips",
        "popcorn", "pretzels", "donuts",
    ),
    "ingredient": (
        "cinnamon", "vanilla", "lemon", "honey", "ginger", "nutmeg", "mint", "almond",
        "caramel", "maple syrup", "cocoa", "raspberry", "blueberry", "peanut butter",
        "oat milk", "brown sugar", "cardamom", "lime", "hazelnut", "orange", "cherry",
        "pistachio", "apricot", "coffee", "toffee", "mango", "peach",
    ),
    "animal": (
        "dog", "cat", "hamster", "rabbit", "parrot", "goldfish", "guinea pig", "turtle",
        "lizard", "ferret", "canary", "gerbil", "hedgehog", "bearded dragon", "dogs", "cats",
        "hamsters", "rabbits", "parrots", "turtles", "kittens", "puppies", "ferrets", "lizards",
        "kitten", "puppy", "pup", "snake", "snakes",
    ),
    "breed": (
        "Labrador", "Beagle", "Poodle", "Golden Retriever", "Dachshund", "Corgi", "Husky",
        "Border Collie", "Boxer", "Bulldog", "Pug", "Great Dane", "Shih Tzu", "Dalmatian",
        "Greyhound", "Schnauzer", "Lab", "Chihuahua", "Terrier", "German Shepherd",
        "Cocker Spaniel", "Mongrel", "Sheepdog", "Pit Bull",
    ),
    "pottery": (
        "bowl", "cup", "mug", "vase", "plate", "teapot", "pitcher", "jar", "planter", "platter",
        "bowls", "cups", "mugs", "vases", "plates", "teapots", "jars", "planters", "pitchers",
    ),
    "outdoors": (
        "beach", "lake", "park", "river", "campsite", "mountains", "forest", "countryside",
        "garden", "harbor", "national park", "hiking trail", "lakeside", "city park",
        "botanical garden", "woods", "meadow", "canyon", "waterfall", "coast", "island",
        "desert", "valley", "state park", "nature reserve",
    ),
    "pet_name": (
        "Buddy", "Bella", "Charlie", "Daisy", "Milo", "Rocky", "Lucy", "Pepper", "Biscuit",
        "Ziggy", "Oreo", "Nala", "Simba", "Rosie", "Teddy", "Ginger", "Scout", "Cooper",
        "Willow", "Maple", "Peanut", "Mochi", "Sunny", "Jasper", "Hazel", "Loki", "Pickles",
        "Waffles", "Duke", "Pumpkin",
    ),
    "person": (
        "Emma", "Liam", "Olivia", "Noah", "Ava", "Ethan", "Sophie", "Lucas", "Grace", "Owen",
        "Chloe", "Henry", "Mia", "Jack", "Nora", "Leo", "Hannah", "Ryan", "Zoe", "Daniel",
        "Lily", "Adam", "Ellie", "Priya", "Marco", "Aisha", "Diego", "Omar", "Tessa", "Felix",
        "neighbors", "coworkers", "classmates", "cousins", "teammates", "roommates",
        "grandparents", "neighbor", "coworker", "classmate", "cousin", "roommate", "aunt",
        "uncle", "brother", "sister", "grandmother", "grandfather", "friends", "friend",
        "family", "mentor", "mentors", "parents", "mother", "father", "sisters", "brothers",
        "mom", "dad", "grandma", "grandpa", "team",
    ),
    "color": (
        "red", "blue", "green", "yellow", "orange", "pink", "teal", "silver", "navy blue",
        "lavender", "turquoise", "maroon", "emerald green", "mint green", "burgundy", "gold",
        "coral", "black", "white", "gray", "bright orange", "pale yellow",
    ),
    "occupation": (
        "teacher", "nurse", "accountant", "librarian", "chef", "electrician", "pharmacist",
        "architect", "graphic designer", "software engineer", "social worker",
        "physical therapist", "photographer", "journalist", "paramedic", "veterinarian",
        "carpenter", "dentist", "translator", "store manager", "sales associate",
        "shift supervisor", "office manager", "project coordinator", "marketing manager",
        "team lead", "regional manager", "senior analyst",
    ),
    "object": (
        "vase", "bookshelf", "quilt", "lamp", "birdhouse", "scarf", "mug", "picture frame",
        "jewelry box", "teapot", "bracelet", "wall clock", "candle holder", "notebook",
        "backpack", "flower pot", "wind chime", "photo album", "coffee table", "rocking chair",
        "blanket", "keychain", "kite", "lantern", "tote bag", "wooden bench", "plates", "mugs",
        "candles", "vases", "postcards", "coasters", "bookmarks", "scarves", "lanterns",
        "picture frames", "wooden spoons", "sweaters", "medal", "ribbon", "plaque",
    ),
    "scene": (
        "sunrise", "sunset", "lighthouse", "waterfall", "mountain range", "old barn", "harbor",
        "starry sky", "city skyline", "stone bridge", "forest path", "meadow", "river",
        "sailboat", "lake", "horse", "owl", "fox", "deer", "castle", "garden", "wildflowers",
        "cherry blossoms", "snowy mountains", "fishing boats", "rolling hills", "autumn leaves",
    ),
    "instrument": (
        "guitar", "piano", "violin", "cello", "flute", "drums", "ukulele", "saxophone",
        "trumpet", "clarinet", "harp", "banjo", "harmonica", "trombone", "mandolin",
        "bass guitar", "electric guitar", "bongos", "bagpipes", "maracas",
    ),
    "language": (
        "French", "Italian", "Japanese", "Portuguese", "Mandarin", "Korean", "Russian",
        "Arabic", "Dutch", "Greek", "Swedish", "Hindi", "Turkish", "Polish",
    ),
    "programming_language": (
        "Java", "JavaScript", "Rust", "Go", "Ruby", "Kotlin", "Swift", "TypeScript", "PHP",
        "Haskell", "Scala", "Perl", "Lua", "Python", "C++",
    ),
    "book_or_title": (
        "Pride and Prejudice", "The Great Gatsby", "Jane Eyre", "Treasure Island", "The Giver",
        "Wonder", "Holes", "Matilda", "Coraline", "The Outsiders", "Frankenstein", "Dracula",
        "Anne of Green Gables", "The Secret Garden", "Little House on the Prairie",
        "Casablanca", "Jaws", "Finding Nemo", "The Princess Bride", "Back to the Future",
        "Toy Story", "Jurassic Park", "Moby Dick", "Great Expectations", "Black Beauty",
        "The Jungle Book", "Peter Pan", "The Wind in the Willows",
    ),
    "game": (
        "Chess", "Monopoly", "Scrabble", "Minecraft", "Tetris", "Mario Kart", "Overwatch",
        "Uno", "Clue", "Risk", "Ticket to Ride", "Stardew Valley", "Animal Crossing", "Halo",
        "Rocket League", "Pac-Man", "Carcassonne", "Pandemic", "Splendor", "Tekken",
        "checkers", "backgammon", "poker", "sudoku", "dominoes", "mahjong", "crosswords",
    ),
    "musician": (
        "Beethoven", "Chopin", "Vivaldi", "Debussy", "Handel", "Schubert", "Adele",
        "Taylor Swift", "Elton John", "Norah Jones", "Billy Joel", "Bob Dylan", "Dolly Parton",
        "Stevie Wonder", "Aretha Franklin", "Frank Sinatra", "Nina Simone", "Johnny Cash",
    ),
    "band": (
        "Coldplay", "Queen", "Nirvana", "Metallica", "The Beatles", "Fleetwood Mac",
        "Pearl Jam", "Green Day", "The Killers", "Imagine Dragons", "Radiohead", "ABBA",
        "Journey", "Foo Fighters", "The Rolling Stones", "Arctic Monkeys", "Maroon 5",
    ),
    "superhero": (
        "Batman", "Superman", "Wonder Woman", "Black Panther", "Captain America", "Thor",
        "Hulk", "Aquaman", "The Flash", "Wolverine", "Green Lantern", "Black Widow",
    ),
    "car": (
        "Toyota", "Honda", "Porsche", "Audi", "Volvo", "Subaru", "Mazda", "Jeep", "Tesla",
        "Civic", "Corolla", "Camry", "Corvette", "Jeep Wrangler", "Ford Bronco", "Honda Civic",
        "Ferrari", "Lamborghini", "Maserati", "Jaguar",
        "Toyota Camry", "Mini Cooper", "Volkswagen Beetle", "Subaru Outback",
    ),
    "genre": (
        "comedy", "horror", "mystery", "romance", "thriller", "science fiction", "drama",
        "documentary", "historical fiction", "adventure", "crime", "western", "animation",
        "poetry", "biography", "memoir", "detective stories", "war movies", "comedies",
        "thrillers", "mysteries", "westerns", "documentaries", "musicals",
    ),
    "music_genre": (
        "jazz", "blues", "folk", "country", "hip-hop", "classical", "rock", "reggae",
        "indie pop", "soul", "punk", "bluegrass", "gospel", "heavy metal", "electronic music",
    ),
    "dance_style": (
        "ballet", "tap", "salsa", "tango", "hip-hop", "jazz", "swing", "ballroom", "flamenco",
        "breakdancing", "waltz", "modern", "Latin", "folk", "contemporary",
    ),
    "event": (
        "bake sale", "charity run", "book fair", "talent show", "craft fair", "food drive",
        "art fair", "charity auction", "fun run", "open house", "block party", "poetry slam",
        "trivia night", "potluck", "car wash", "benefit concert", "film festival",
        "science fair", "street festival", "clothing drive", "cooking contest", "dance recital",
        "garden tour", "fundraiser", "marathon", "cook-off", "playdate", "picnic", "art show",
    ),
    "drink": (
        "pale ale", "porter", "pilsner", "wheat beer", "cider", "amber ale", "red wine",
        "white wine", "iced tea", "lemonade", "espresso", "hot chocolate", "green tea", "beer",
    ),
    "cause": (
        "animal welfare", "mental health", "homelessness", "climate change", "literacy",
        "education", "clean water", "food insecurity", "child poverty", "disability rights",
        "cancer research", "public libraries", "affordable housing", "ocean cleanup",
        "foster care", "refugees", "wildlife conservation", "veterans", "suicide prevention",
    ),
    "team": (
        "the Tigers", "the Falcons", "the Rangers", "the Hawks", "the Bears", "the Sharks",
        "the Lions", "the Panthers", "the Mustangs", "the Hornets", "the Comets", "the Raptors",
        "the Storm", "the Wildcats", "the Pirates", "the Royals",
    ),
    "yoga_pose": (
        "downward dog", "child's pose", "cobra pose", "mountain pose", "crow pose",
        "bridge pose", "pigeon pose", "plank", "triangle pose", "lotus pose", "boat pose",
        "chair pose", "camel pose", "half moon",
    ),
    "pizza": (
        "margherita", "pepperoni", "mushroom", "sausage", "veggie", "four cheese",
        "BBQ chicken", "meat lovers", "supreme", "buffalo chicken", "white pizza", "Hawaiian",
    ),
    "business": (
        "bakery", "coffee shop", "bookstore", "food truck", "yoga studio", "bike shop",
        "flower shop", "restaurant", "pet store", "thrift store", "print shop", "hair salon",
        "tea room", "furniture store", "toy store",
    ),
    "allergen": (
        "peanuts", "shellfish", "gluten", "pollen", "dust", "eggs", "soy", "tree nuts",
        "penicillin", "latex", "bee stings", "wheat", "strawberries",
    ),
    "song": (
        "Golden Hour", "Northern Lights", "Summer Rain", "Morning Light", "Quiet Harbor",
        "Blue Skies", "River Song", "Paper Moon", "Silver Lining", "Open Road", "Wildflower",
        "Moonlight Sonata", "Clair de Lune", "Evening Tide", "Homeward",
    ),
    "writing": (
        "poetry", "short stories", "essays", "fan fiction", "song lyrics", "memoir",
        "screenplays", "blog posts", "journaling", "letters", "travel writing", "haiku",
        "creative nonfiction", "children's stories",
    ),
    "trick": (
        "sit", "stay", "shake", "play dead", "fetch", "high five", "roll over", "spin", "beg",
        "wave", "speak", "jump through a hoop",
    ),
    "bird": (
        "owls", "hawks", "herons", "robins", "hummingbirds", "cardinals", "blue jays",
        "sparrows", "pelicans", "falcons", "swans", "woodpeckers", "cranes", "kingfishers",
        "eagles",
    ),
    "meat": (
        "beef", "pork", "lamb", "turkey", "duck", "salmon", "venison", "steak", "tuna", "chicken",
    ),
    "status": ("married", "engaged", "divorced", "separated", "widowed", "single"),
    "yoga_style": (
        "hatha", "vinyasa", "restorative", "hot", "power", "yin", "ashtanga", "kundalini",
        "aerial", "chair", "prenatal", "Iyengar",
    ),
    "flower": (
        "roses", "tulips", "daisies", "orchids", "lilies", "peonies", "daffodils", "marigolds",
        "carnations", "dahlias", "hydrangeas", "sunflowers", "violets", "poppies", "irises",
    ),
    "disaster": (
        "storm", "wildfire", "tornado", "hurricane", "earthquake", "blizzard", "mudslide",
        "hailstorm", "drought", "heat wave", "flood", "ice storm",
    ),
    "ailment": (
        "migraine", "asthma", "heartburn", "acid reflux", "back pain", "insomnia", "bronchitis",
        "sinusitis", "tendonitis", "anemia", "sprained ankle", "knee injury", "shoulder injury",
        "pneumonia", "food poisoning", "high blood pressure",
    ),
    "feeling": (
        "excited", "proud", "nervous", "grateful", "relieved", "calm", "hopeful", "overwhelmed",
        "thrilled", "anxious", "content", "joyful", "inspired", "motivated", "frustrated",
        "disappointed", "peaceful", "nostalgic", "confident", "happy", "curious", "determined",
        "energized", "restless", "humbled", "emotional", "glad", "free", "light", "confused",
        "thankful", "touched", "uneasy", "cheerful", "awestruck",
    ),
    "description": (
        "amazing", "incredible", "beautiful", "wonderful", "breathtaking", "unforgettable",
        "fantastic", "stunning", "relaxing", "peaceful", "exhausting", "chaotic", "magical",
        "inspiring", "intense", "cozy", "challenging", "rewarding", "memorable", "exciting",
        "tough", "overwhelming", "charming", "lively", "humbling", "surprising", "awesome",
        "spectacular", "gorgeous", "stressful", "draining", "hectic", "tiring", "frustrating",
        "lonely", "difficult",
    ),
    "quality": (
        "courage", "hope", "patience", "kindness", "resilience", "honesty", "loyalty",
        "independence", "gratitude", "friendship", "peace", "wisdom", "creativity",
        "perseverance", "compassion", "faith", "joy", "growth", "freedom", "unity", "balance",
        "love", "strength", "curiosity", "generosity", "humility", "discipline",
        "determination", "appreciation", "purpose", "leadership", "confidence", "respect",
        "empathy", "trust", "motivation", "dedication", "optimism", "positivity", "integrity",
    ),
    "emotion": (
        "joy", "peace", "gratitude", "hope", "pride", "relief", "comfort", "calm", "love",
        "warmth", "nostalgia", "contentment", "excitement", "serenity", "happiness",
        "sadness", "longing",
    ),
    "sport": (
        "basketball", "soccer", "baseball", "hockey", "volleyball", "tennis", "football", "rugby",
        "softball", "lacrosse", "cricket", "water polo", "handball", "badminton",
    ),
    "topic": (
        "travel", "music", "books", "movies", "cooking", "gardening", "history", "science",
        "sports", "art", "politics", "health", "food", "photography", "technology", "nature",
        "family", "work", "school", "fashion", "gaming", "home repairs", "local news",
    ),
    "position": (
        "point guard", "center", "small forward", "power forward", "goalkeeper", "pitcher",
        "quarterback", "shortstop", "catcher", "striker", "defender", "midfielder", "winger",
    ),
    "trait": (
        "kind", "patient", "generous", "curious", "brave", "honest", "funny", "caring",
        "creative", "loyal", "ambitious", "humble", "reliable", "cheerful", "thoughtful",
        "driven", "authentic", "calm", "warm", "optimistic", "resilient", "gentle",
    ),
    "frequency": (
        "every day", "every morning", "twice a month", "once a month", "every weekend",
        "every other day", "three times a year", "twice a week", "every evening", "once a year",
        "every few months", "most weekends", "every Sunday", "every summer", "once in a while",
        "every other week", "a few times a month", "two or three times a month",
        "at least once a month", "almost every day", "every couple of weeks",
        "four times a week", "once every two months",
    ),
    "date": (
        "last year", "a few months ago", "two years ago", "last month", "a few weeks ago",
        "three months ago", "five years ago", "four years ago", "six months ago",
        "three years ago", "a couple of weeks ago", "ten years ago", "last week",
    ),
}  # fmt: skip
"""A few dozen common English values of each type, written by us: the false values a
type offers beside LoCoMo's own answers. Bare (no leading article); names capitalised."""

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


@dataclass(frozen=True)
class Shape:
    """A value split into what a false value keeps (quotes, a preposition, an article)
    and its core, the words a false value replaces."""

    opening: str
    """Quote, preposition and article before the core, as written ("in a ", "\\"")."""
    article: str
    """The article, lower-cased: a false core gets "a" or "an" by its first letter."""
    core: str
    closing: str

    @property
    def words(self) -> int:
        return len(self.core.split())

    def render(self, core: str, kind: str) -> str:
        """The false value: ``core`` in this shape (article fixed for its first letter,
        first letter capitalised where this core's is, for a common noun)."""
        lead = self.core.split()[0] if self.core.split() else ""
        if kind not in NAME_TYPES and lead[:1].isupper() and lead[1:].islower():
            titled = self.words > 1 and _is_name(self.core)
            core = _titled(core) if titled else core[:1].upper() + core[1:]
        lead, first = self.core.split()[0], core.split()[0]
        if lead.lower() == first.lower() in _ARTICLES:  # "The Wolves": "The Tigers"
            core = lead + core[len(first) :]
        opening = self.opening
        written = re.search(r"\b(a|an)\s+$", opening, re.IGNORECASE)
        if written is not None:
            article = "an" if _vowel(core) else "a"
            article = article.capitalize() if written[1][0].isupper() else article
            opening = f"{opening[: written.start()]}{article} "
        return f"{opening}{core}{self.closing}"


def _titled(text: str) -> str:
    """Every word but a connector capitalised ("Banana Bread")."""
    words = text.split()
    return " ".join(
        w if i and w in _CONNECTORS else w[:1].upper() + w[1:] for i, w in enumerate(words)
    )


def shape(value: str, kind: str) -> Shape:
    """The value's shape; a name's article ("The Alchemist") and a date's ("a year ago")
    stay in its core, and only a place or a date keeps a preposition ("in a forest", "in
    2010")."""
    stripped = value.strip()
    left = len(stripped) - len(stripped.lstrip(_QUOTES))
    right = len(stripped) - len(stripped.rstrip(_QUOTES))
    inner = stripped[left : len(stripped) - right]
    opening, closing = stripped[:left], stripped[len(stripped) - right :]
    found = _PREFIX.match(inner)
    dated = re.match(r"(?:in|on)\s+(?=\S)", inner, re.IGNORECASE) if kind == "date" else None
    if dated is not None:
        return Shape(opening + dated[0], "", inner[dated.end() :], closing)
    keeps = kind in NAME_TYPES - {"place"} or kind in NUMBERED | {"date", "frequency"}
    if keeps or found is None or (found["prep"] and kind != "place") or found.end() == len(inner):
        return Shape(opening, "", inner, closing)
    article = (found["art"] or "").lower()
    return Shape(opening + inner[: found.end()], article, inner[found.end() :], closing)


def _vowel(text: str) -> bool:
    """True when the text takes "an" ("an owl", but "a unicorn")."""
    return text[:1].lower() in "aeiou" and not text.lower().startswith(("uni", "use", "eu"))


_SINGULAR_S = frozenset({"pilates", "news", "chess", "series", "species", "lens", "gas"})


def _plural(text: str) -> bool:
    """True when the text's last word is a plural ("cats", not "chess" nor "pilates")."""
    last = text.split()[-1].lower() if text.split() else ""
    singular = last.endswith(("ss", "us", "is", "ics", "ous")) or last in _SINGULAR_S
    return last.endswith("s") and not singular


def _is_name(text: str) -> bool:
    """Every word that is not a connector starts with a capital ("Lord of the Rings")."""
    named = [w for w in text.split() if w.lower() not in _CONNECTORS]
    return bool(named) and all(w[:1].isupper() or w[:1].isdigit() for w in named)


def _form_fits(kind: str, value: str) -> bool:
    """True when the value has the form its type takes (a thing, not a clause; a number
    for a count; a name for a name; adjectives for a feeling)."""
    form = shape(value, kind)
    core, words = form.core, _words(form.core)
    if not words or len(words) > MAX_WORDS.get(kind, 4):
        return False
    if kind in NUMBERED:
        return _amount(core, kind) is not None
    if kind == "date":
        return bool(date_spans(core, ANCHOR))
    if kind == "frequency":
        return bool(_FREQUENCY.search(core))
    if kind == "book_or_title":
        return _is_name(core) or form.opening.endswith(tuple(_QUOTES))
    if kind in NAME_TYPES - {"place", "person", "breed"} and _is_name(core):
        return not _CLAUSE_WORDS & set(words)  # "Dungeons of the Dragon"
    if not _is_thing(words):
        return False
    if kind in ADJECTIVES:
        return all(_adjective(w) for w in words if w != "and")
    if kind in ("quality", "emotion"):
        return all(w in _vocabulary(kind) or w.endswith(_QUALITY_END) for w in words if w != "and")
    if kind in ("breed", "sport"):  # a breed the lexicon knows ("Lab"), not a dog's name
        return all(w in _vocabulary(kind) for w in words)  # ("Pixie"); no "2D adventure"
    if kind in NAME_TYPES:
        return _is_name(core) or core.islower() and _lower_name_fits(kind, words)
    return _common_case(kind, core, words)


def _common_case(kind: str, core: str, words: list[str]) -> bool:
    """A common noun's capitals: none, a first capital of several words ("Video games", a
    sentence's first words) or of a word the lexicon knows ("Yoga"), or a dish's name in
    capitals ("Chicken Pot Pie"); a capitalised name ("Ferrari") is not a common noun."""
    first, rest = core.split()[0], core.split()[1:]
    acronym = len(first) > 1 and first.isupper() and all(w.islower() for w in rest)
    if not core[:1].isupper() or acronym or len(words) > 1 and core[1:].islower():
        return True  # "LGBTQ+ counseling workshop", "Video games"
    if kind in TITLED and len(words) > 1:
        return True
    return all(w in _vocabulary(kind) for w in words if w != "and")


def _is_thing(words: list[str]) -> bool:
    """A noun phrase: no pronoun or verb of a clause, no article or preposition (but "of")
    after the first word, and not ending in a preposition."""
    inner_article = any(w in _ARTICLES for w in words[1:])
    inner_preposition = any(w in _PREPOSITIONS - {"of"} | {"or"} for w in words[1:])
    ends_open = words[-1] in _PREPOSITIONS | _ARTICLES | {"and"}
    return not (_CLAUSE_WORDS & set(words) or inner_article or inner_preposition or ends_open)


def _adjective(word: str) -> bool:
    """A word the adjective lexicons know, or with an adjective's ending and not a noun's
    ("excitement" is no feeling word, but an emotion)."""
    known = any(word in _vocabulary(k) for k in ADJECTIVES)
    return known or word.endswith(_ADJECTIVE_END) and not word.endswith(_QUALITY_END)


def _lower_name_fits(kind: str, words: list[str]) -> bool:
    """A lower-case value of a name type: a relation for a person ("friends"), a common
    place ("homeless shelter"), a board game ("chess")."""
    if kind == "place":
        return words[-1] in _vocabulary(kind) | _PLACE_NOUNS
    return kind in ("person", "game") and words[-1] in _vocabulary(kind)


def value_type(question: str, answer: str, value: str) -> str:
    """The semantic type of a slot value (one of ``TYPES``): what the question asks for
    when the value has that type's form, else what the value is by itself (a lexicon
    entry: "violin", "Boston"); "other" when unsure (a clause, a phrase)."""
    asked = _question_type(question)
    for reading in _READINGS.get(asked, (asked,)) if asked else ():
        kind = _narrowed(reading, shape(value, reading).core)
        if _form_fits(kind, value):
            return kind
    core = shape(value, "other").core
    by_value = _value_type(question, core)
    if by_value is None or not _form_fits(by_value, value):
        return "other"
    if by_value == "activity" and _EXERCISE & set(_words(question)):
        return "exercise"  # "What suggestions did Evan give for low-impact exercises?"
    return _narrowed(by_value, shape(value, by_value).core)


_EXERCISE = frozenset({"exercise", "exercises", "workout", "workouts", "fitness", "sport",
                       "sports"})  # fmt: skip
"""Question words by which an activity must be an exercise."""


_READINGS = {"feeling": ("feeling", "emotion")}
"""The types a question's type may be read as, in turn ("feel": "excited", or "peace")."""


def _narrowed(kind: str, core: str) -> str:
    """A narrower type the value shows: a country, a city or the outdoors for a place
    ("Ireland", "the beach"), food or a car for a thing ("vegan ice cream", "Ferrari"), a
    description for a feeling said of a thing ("stressful")."""
    low = core.lower()
    last = (_words(low) or [""])[-1]
    if kind == "place":
        narrow = next((k for k in ("country", "city") if low in _entries(k)), kind)
        outdoors = narrow == kind and core.islower() and last in _vocabulary("outdoors")
        return "outdoors" if outdoors else narrow
    if kind == "object" and last in _vocabulary("food") - _vocabulary(kind):
        return "food"
    if kind == "food" and last in _TOPPINGS:  # "coconut cream frosting": what tops a cake
        return "ingredient"
    if kind == "object" and low in _entries("car"):  # "a masterpiece on wheels": a Ferrari
        return "car"
    if kind == "activity" and last in _COURSE_HEADS:
        return "course"
    if kind == "activity" and last in _vocabulary("food") - _vocabulary(kind):
        return "food"  # "candy", a diet's habit
    said_of_things = all(w.endswith(_OF_THINGS) for w in _words(low) if w != "and")
    if kind == "feeling" and said_of_things:  # "stressful" work, not a "determined" one
        return "description"
    return kind


_GLOOMY = frozenset(
    {"nervous", "anxious", "overwhelmed", "frustrated", "disappointed", "restless", "uneasy",
     "confused", "stressed", "sad", "scared", "worried", "lonely", "exhausted", "exhausting",
     "chaotic", "intense", "challenging", "tough", "overwhelming", "stressful", "draining",
     "hectic", "tiring", "frustrating", "difficult", "awestruck", "humbled", "emotional"}
)  # fmt: skip
"""Adjectives of a hard time: a false feeling or description keeps the true one's mood
("tough and stressful" work is not "tough and cozy")."""
_OF_THINGS = ("ing", "ful", "ous", "ive", "ble")
"""Endings of adjectives said of a thing ("exciting", "stressful"), not of a feeling one
("excited", "stressed")."""


def _with_the(answer: str, part: str, kind: str) -> str:
    """A name's part of a list answer with the "The" the answer gives it ("The Alchemist")."""
    found = re.search(rf"\bThe {re.escape(part)}", answer)
    return found[0] if kind in NAME_TYPES and found else part


def _normal(kind: str, value: str) -> str:
    """A pool value as the pool keeps it: its core, a common noun in lower case (but an
    acronym: "LGBTQ+"), a dish's capitals too ("Chicken Pot Pie": "chicken pot pie")."""
    core = shape(value, kind).core.strip(" .,;:")
    if kind in ("date", "frequency") or kind in NAME_TYPES and (_is_name(core) or core.islower()):
        return core
    if kind in TITLED and _is_name(core):
        return core.lower()
    first = core.split()[0] if core.split() else ""
    return core if first.isupper() and len(first) > 1 else core[:1].lower() + core[1:]


@dataclass(frozen=True)
class ValuePool:
    """The candidate false values of each type: LoCoMo's answers (categories 1-4) whose
    questions type the same way, and the lexicon's."""

    values: dict[str, tuple[str, ...]]

    @classmethod
    def from_conversations(cls, convs: Iterable[Conversation]) -> ValuePool:
        """The pool of every answer of these conversations, with the lexicon."""
        found: dict[str, set[str]] = {kind: set(words) for kind, words in LEXICON.items()}
        for conv in convs:
            for item in conv.qa:
                if int(item.get("category", 0)) not in (1, 2, 3, 4) or "answer" not in item:
                    continue
                question, answer = str(item["question"]), str(item["answer"]).strip()
                kind = _question_type(question)
                if kind not in POOLED or _verb_type(_words(question)) == kind:
                    continue  # what a verb asks for is looser than what a noun names
                for part in answer_items(answer):
                    if _form_fits(kind, part) and _poolable(kind, part):
                        found[kind].add(_normal(kind, _with_the(answer, part, kind)))
        return cls({kind: tuple(sorted(v for v in vs if v)) for kind, vs in found.items()})

    def of(self, kind: str) -> tuple[str, ...]:
        """The candidates of a type, sorted (none for counts, durations and "other")."""
        return self.values.get(kind, ())


POOLED = frozenset(
    {"place", "city", "country", "activity", "food", "person", "pet_name", "book_or_title",
     "game", "band", "car", "team", "song", "superhero", "breed", "event", "frequency", "date",
     "musician"}
)  # fmt: skip
"""Types whose LoCoMo answers join the pool: names, dishes, events, activities, times.
Other types' answers are too loose to offer (a "cause" that is an event, an "object" that
is a feeling), so those offer their lexicon alone."""


def _poolable(kind: str, value: str) -> bool:
    """True when a LoCoMo answer (typed by its question) may be a false value: a name as a
    name (not a word like "Communication"), an activity as a lexicon entry or a gerund with
    its object ("fixing cars"), anything else not led by a gerund nor holding a date."""
    core = shape(value, kind).core.strip(" .,;:")
    words = _words(core)
    if words == [] or len(words) == 1 and words[0] in _CLAUSE_WORDS:  # "That" (a show)
        return False
    if kind == "activity":
        return " ".join(words) in _entries(kind) or len(words) > 1 and _gerund(words[0])
    if kind != "date" and (date_mentions(core) or _gerund(words[0]) or words[0] in _PREPOSITIONS):
        return False
    if kind == "food" and "of" in words:  # "bowl of spinach": a serving, not a dish
        return False
    if kind in NAME_TYPES and not core.islower():
        common = len(words) == 1 and words[0].endswith(_QUALITY_END)  # "Communication"
        return _is_name(core) and not common and "'s" not in core  # "McGee's": a bar
    return True


def _gerund(word: str) -> bool:
    """True for a verb's -ing form ("reading"), not a noun ending so ("morning")."""
    return word.endswith("ing") and len(word) > 5 and word not in _NOT_GERUNDS


def _key(text: str) -> str:
    """A value as ``avoid`` compares it: lower-case, no quotes, article or end stops."""
    words = _words(text.strip(_QUOTES + " ."))
    return " ".join(words[1:] if words[:1] and words[0] in _ARTICLES else words)


def _avoided(avoid: Collection[str]) -> frozenset[str]:
    """Every value to avoid, and each part of a list among them."""
    return frozenset(_key(p) for a in avoid for p in [a, *answer_items(a)] if _key(p))


def false_value(
    pool: ValuePool,
    question: str,
    answer: str,
    value: str,
    rng: random.Random,
    avoid: Collection[str] = (),
    *,
    sentence: str | None = None,
) -> str | None:
    """A false value of ``value``'s type that fits where it stands: as long (within a word,
    the same length where the pool allows), capitalised and articled alike, sharing no
    content word with the answer or the question, not the answer nor in ``avoid``, and
    where ``sentence`` is given (the text ``value`` stands in), one of the type as the
    sentence uses it that ``fits`` it. None when the type is "other" or no candidate fits,
    so that the caller leaves the slot unpoisoned. Deterministic given ``rng``."""
    typed = value_type(question, answer, value)
    kind = typed if sentence is None else _kind_in(typed, sentence, value)
    if kind is None or kind == "other":
        return None
    form = shape(value, kind)
    banned = _avoided(avoid)
    head = _kept_head(form, kind)
    options = [
        form.render(core, kind)
        for core in _candidates(pool, kind, form, answer)
        if _key(core) not in banned
        and not same_value(core, answer)
        and (kind in NUMBERED | {"date"} or _apart(core, question, answer, head))
    ]
    if sentence is not None:
        options = [o for o in options if fits(sentence, value, o)]
    same = [o for o in options if len(shape(o, kind).core.split()) == form.words]
    return rng.choice(same or options) if options else None


_DETERMINERS = frozenset(
    {"a", "an", "the", "my", "your", "his", "her", "our", "their", "its", "this", "that",
     "these", "those", "some", "one", "every", "each", "another", "any"}
)  # fmt: skip
"""Words before a counted thing ("this candle"); without one, a thing is a mass."""

_ATTRIBUTIVE = frozenset(
    {"session", "sessions", "class", "classes", "lesson", "lessons", "club", "group", "team",
     "gear", "routine", "practice", "workshop", "course", "tour", "competition", "event"}
)  # fmt: skip
"""Nouns an activity may stand before as a modifier ("a painting session")."""
_OUTINGS = frozenset({"trip", "trips", "getaway", "vacation", "holiday"})
"""Nouns an outing stands before ("a camping trip"), which not every activity makes."""
_PERSON = frozenset(
    {"i", "i'm", "we", "we're", "he", "he's", "she", "she's", "they", "they're", "you",
     "you're", "me", "us", "him", "them", "feel", "feels", "felt", "customers", "people"}
)  # fmt: skip
"""Words by which a feeling is said of someone ("they were so confused", "make my
customers feel cozy"); without one it is said of a thing and is a description."""
_COUNTING = frozenset({"a", "an", "this", "that", "their", "his", "her", "its"})
"""Words that make an activity a thing ("an awesome painting", "their grooming")."""
MASS = frozenset({"activity", "cause", "topic", "quality", "emotion", "genre", "music_genre",
                  "writing"})  # fmt: skip
"""Types whose values take no "a" ("a toy drive" is no cause)."""
TITLES = frozenset({"book_or_title", "song", "game"})
"""Types whose values a turn may quote."""


def _kind_in(kind: str, sentence: str, value: str) -> str | None:
    """The type as the sentence uses the value: a feeling said of a thing ("it was totally
    surreal", "the atmosphere was really electric") is a description, an activity before
    "trip" an outing ("a camping trip"); None where no value of the type fits: a mass noun
    counted ("an awesome painting!", "a toy drive"), a thing without a determiner ("I made
    vegan ice cream"), which a counted thing cannot replace, or a part of a quoted title."""
    found = re.search(rf"(?<!\w){re.escape(value)}(?!\w)", sentence, re.IGNORECASE)
    if found is None:
        return kind
    head, tail = sentence[: found.start()], sentence[found.end() :]
    before, after = _words(head)[-2:], _words(tail)[:1]
    said_of_thing = r"\b(?:it|that|this)(?:'s| was| is| felt)\s+(?:\w+\s+)?$"
    spoken = _words(head)  # none: "Glad to be part of it", an "I'm" left out
    of_thing = re.search(said_of_thing, head, re.IGNORECASE) or spoken and not _PERSON & set(spoken)
    if kind == "feeling" and of_thing:  # "The atmosphere was really electric"
        return "description"
    if kind == "activity" and set(after) & _OUTINGS:
        return "outing"
    counting = _COUNTING if kind == "activity" else {"a", "an"}
    if kind in MASS and counting & set(before) and not set(after) & _ATTRIBUTIVE:
        return None
    counted = kind in ("object", "scene") and not _plural(value)
    bare = not shape(value, kind).article and not _DETERMINERS & set(before)
    if counted and (bare or before[-1:] == ["some"]):  # "some money": a mass noun
        return None
    if kind in TITLES and _inside_quotes(head, tail):
        return None
    return kind


def _inside_quotes(head: str, tail: str) -> bool:
    """True when the value is a part of a longer quoted text ("Harry Potter" in "Harry
    Potter and the Philosopher's Stone")."""
    opened = head.count('"') % 2 == 1 or head.count("“") > head.count("”")
    if not opened:
        return False
    inside_before = re.split(r'["“]', head)[-1]
    inside_after = re.split(r'["”]', tail)[0]
    return bool(_words(inside_before) or _words(inside_after))


def _apart(core: str, question: str, answer: str, head: str | None) -> bool:
    """True when the core (but a head it keeps) shares no content word with the answer or
    the question (a count, a duration or a date keeps its unit, so only its number must
    differ)."""
    varied = core[: -len(head)] if head else core
    return not stems(varied) & (stems(answer) | stems(question))


_TOPPINGS = frozenset({"frosting", "filling", "topping", "sauce", "glaze", "syrup", "icing"})
_COURSE_HEADS = frozenset(
    {"class", "classes", "course", "courses", "workshop", "workshops", "lesson", "lessons"}
)  # fmt: skip


def _kept_head(form: Shape, kind: str) -> str | None:
    """The head noun a course keeps ("gardening class": "class"), so that only what is
    taught changes."""
    words = form.core.split()
    return words[-1] if kind == "course" and len(words) > 1 and words[-1] in _COURSE_HEADS else None


def _candidates(pool: ValuePool, kind: str, form: Shape, answer: str) -> list[str]:
    """The cores of a type that take this shape's place (before the answer and avoid
    checks): another number for a count, a day far from the answer's for a date, another
    subject for a course ("pottery class")."""
    if kind in NUMBERED:
        return _renumbered(form.core, kind)
    head = _kept_head(form, kind)
    if head is not None:
        return [f"{c} {head}" for c in pool.of(kind) if " " not in c]
    cores = list(pool.of(kind))
    if len(form.core.split(" and ")) == 2:  # "warmth and happiness": a pair of the type
        singles = [c for c in cores if " " not in c]
        cores += [f"{a} and {b}" for a in singles for b in singles if a != b]
    cores = [c for c in cores if _alike(form, c, kind)]
    if kind == "date":
        return [c for c in cores if _far_dates(form.core, c, answer)]
    return cores


def _alike(form: Shape, core: str, kind: str) -> bool:
    """A candidate core as long (within a word) as the value's, a name for a capitalised
    name, else lower-case, plural for a plural, a gerund for a gerund ("a hiking trip")
    and led by a vowel for a vowel (its "a" or "an" may stand before it)."""
    if abs(len(core.split()) - form.words) > 1 or core.lower() == form.core.lower():
        return False
    if kind == "activity" and _gerund(_words(core)[0]) != _gerund(_words(form.core)[0]):
        return False
    if kind in NAME_TYPES and _is_name(form.core):
        led = _words(core)[0] == "the" if core.split() else False
        alike = _plural(core) == _plural(form.core) and led == (_words(form.core)[0] == "the")
        return _is_name(core) and alike  # "the Rockies"; "The Alchemist" for "The Godfather"
    if kind == "date":
        return True
    if not core[:1].islower() or _plural(core) != _plural(form.core):
        return False
    if kind in ADJECTIVES and _gloomy(core) != _gloomy(form.core):
        return False
    return bool(form.article) or _plural(core) or _vowel(core) == _vowel(form.core)


def _amount(core: str, kind: str) -> re.Match[str] | None:
    """The one number of a count ("three"), or the amount of a duration ("a few" months);
    None for a range ("30-60 seconds")."""
    if re.search(r"\d\s*[-–]\s*\d", core):
        return None
    if kind == "count":
        found = _COUNT.findall(core)
        return _COUNT.search(core) if len(found) == 1 else None
    return _DURATION.search(core) if len(_COUNT.findall(core)) <= 1 else None


def _gloomy(text: str) -> bool:
    """True when the text says a hard time ("stressful")."""
    return bool(_GLOOMY & set(_words(text)))


def _renumbered(core: str, kind: str) -> list[str]:
    """The core with its number replaced by numbers near it but outside what it means,
    written the same way (digits for digits, words for words), its unit made plural."""
    found = _amount(core, kind)
    assert found is not None
    written = found["n"]
    low, high = (
        _VAGUE.get(written.lower()) or (int(NUMBER_WORDS.get(written.lower(), written)),) * 2
    )
    if kind == "count" and low < 2:
        return []  # its noun's number would change
    reach = max(3, high // 2)
    numbers = [m for m in range(max(2, low - reach), high + reach + 1) if not low <= m <= high]
    if written.isdigit():
        spelled = [str(m) for m in numbers]
    else:
        by_value = {int(v): w for w, v in NUMBER_WORDS.items()}
        spelled = [by_value[m] for m in numbers if m in by_value]
        spelled = [w.capitalize() if written[0].isupper() else w for w in spelled]
    after = core[found.end("n") :]
    if high == 1 and kind == "duration":
        unit_end = found.end("unit")
        after = core[found.end("n") : unit_end] + "s" + core[unit_end:]
    return [core[: found.start("n")] + w + after for w in spelled]


def _far_dates(value: str, candidate: str, answer: str) -> bool:
    """A candidate date written like the value (relative or explicit, a day for a day, a
    month for a month, a year for a year) that means days at least DAY_MARGIN away from
    the value's and the answer's."""
    if bool(date_mentions(value)) != bool(date_mentions(candidate)):
        return False
    taken = date_spans(value, ANCHOR) + date_spans(answer, ANCHOR)
    spans = date_spans(candidate, ANCHOR)
    if [_grain(s) for s in spans[:1]] != [_grain(s) for s in taken[:1]]:
        return False
    return bool(spans) and all(_gap(c, t) >= DAY_MARGIN for c in spans for t in taken)


def _grain(span: DaySpan) -> str:
    """A day, a month, a year, or some other run of days."""
    days = span.days()
    return "day" if days == 1 else "month" if 28 <= days <= 31 else "year" if days >= 365 else "run"


def _gap(a: DaySpan, b: DaySpan) -> int:
    """Days between two spans (0 when they overlap)."""
    return max((a.first - b.last).days, (b.first - a.last).days, 0)


_DOUBLED = re.compile(r"\b(a|an|the)\s+(?:a|an|the)\b|\b(\w+)\s+\2\b", re.IGNORECASE)
_WRONG_ARTICLE = re.compile(r"\ba\s+[aeiou]\w|\ban\s+[b-df-hj-np-tv-z]\w", re.IGNORECASE)


def fits(sentence: str, old: str, new: str) -> bool:
    """True when ``sentence`` with ``old`` replaced by ``new`` stays well formed: no doubled
    article or word, no "a" before a vowel (or "an" before a consonant), no "a" before a
    plural, no name after "the", no value ending in a preposition, and no word the
    sentence already says."""
    found = re.search(rf"(?<!\w){re.escape(old)}(?!\w)", sentence, re.IGNORECASE)
    if found is None or not _words(new):
        return False
    before, after = sentence[: found.start()], sentence[found.end() :]
    said = f"{before}{new}{after}"
    if _words(new)[-1] in _PREPOSITIONS | _ARTICLES:
        return False
    for pattern in (_DOUBLED, _WRONG_ARTICLE):
        if len(pattern.findall(said)) > len(pattern.findall(sentence)):
            return False
    if re.search(r"\ban?\s*$", before, re.IGNORECASE) and _plural(new):
        return False
    if re.search(r"\bthe\s*$", before, re.IGNORECASE) and old[:1].isupper():
        return False  # "the Smoky Mountains": few names take "the" ("the New Orleans")
    return not stems(new) & stems(f"{before} {after}")


def false_day(answer: str, true_day: dt.date, rng: random.Random) -> dt.date:
    """A day for a dated slot at least DAY_MARGIN days outside the gold answer's period
    (what ``answer`` means, read by ``dates.date_spans``, or ``true_day`` ± 7 days when it
    cannot be read) and within DAY_REACH days of ``true_day`` where the period allows,
    else within DAY_REACH days beyond the period (an answer of a whole year)."""
    period = _period(answer, true_day)
    low = period.first - dt.timedelta(DAY_MARGIN)
    high = period.last + dt.timedelta(DAY_MARGIN)
    near = [true_day + dt.timedelta(k) for k in range(-DAY_REACH, DAY_REACH + 1)]
    outside = [d for d in near if d <= low or d >= high]
    beyond = [low - dt.timedelta(k) for k in range(DAY_REACH)]
    return rng.choice(outside or beyond + [high + dt.timedelta(k) for k in range(DAY_REACH)])


def _period(answer: str, true_day: dt.date) -> DaySpan:
    """The days the answer means, with the true day: every date it states (a day, a month,
    a year, "the weekend before ..."), or the true day ± 7 days when it states none."""
    week = dt.timedelta(7)
    spans = date_spans(answer) or [DaySpan(true_day - week, true_day + week)]
    first = min([true_day, *(s.first for s in spans)])
    last = max([true_day, *(s.last for s in spans)])
    return DaySpan(first, last, answer)
