# ruff: noqa: E501 - long prose and data strings read better unwrapped
"""The agent-memory question set, as written by hand: each gold line is named by a quote.

``python -m benchmarks.questions build`` resolves every quote to its line in the generated workspace
(memorybank logs + fixtures/workspace) and writes ``agent_memory.jsonl``; ``verify`` re-checks the
committed file. Gold format: a question has a list of *evidence items* (all needed: two for a
multi-hop question); an item has one or more *alternatives* (any one satisfies it: the same fact in
a daily log, a Retain bullet or a bank/ page). An alternative is (path, quote) for the one line that
contains ``quote``, or (path, (first_quote, last_quote)) for the lines from one to the other.

Questions about MemoryBank users name the user (all 15 users share one workspace, one folder each,
and a question without a name would be ambiguous). ``today`` anchors relative time ("yesterday",
"last week"); it is passed to systems that accept it. Categories: paraphrase, identifier, entity,
temporal, multi-hop, vietnamese, cjk, none (no answer anywhere: the best output is nothing).
"""

from __future__ import annotations


def mb(user: str, day: str, quote):
    """An alternative in a MemoryBank log: mb("Emily", "04-28", "Green Meadow Park")."""
    return (f"memory/{user}/2023-{day}.md", quote)


def fx(path: str, quote):
    """An alternative in fixtures/workspace."""
    return (path, quote)


def one(*alternatives):
    """One evidence item satisfied by any of ``alternatives``."""
    return list(alternatives)


def Q(cat: str, question: str, *items, answer: str = "", today: str | None = None) -> dict:
    return {
        "category": cat,
        "question": question,
        "gold": [list(i) if isinstance(i, list) else [i] for i in items],
        "answer": answer,
        "today": today,
    }


QUESTIONS: list[dict] = [
    # ------------------------------------------------------------------ Emily
    Q(
        "paraphrase",
        "Where did Emily take a walk and see a small animal and trees in flower?",
        mb("Emily", "04-28", "I went to Green Meadow Park"),
        answer="Green Meadow Park",
    ),
    Q(
        "identifier",
        'Emily mentioned "Silent Separation". What is it?',
        mb("Emily", "04-28", '"Silent Separation"'),
        answer="A love novel she was reading.",
    ),
    Q(
        "paraphrase",
        "What is Emily's recipe for the fish dish she learned?",
        mb("Emily", "04-29", "first I cleaned the sea bass"),
        answer="Scallions, ginger and garlic inside, marinated with salt and cooking wine, steamed ~10 min.",
    ),
    Q(
        "temporal",
        "What exhibition did Emily see at the museum on May 2nd?",
        mb("Emily", "05-02", "famous exhibition of ancient artwork"),
        answer="Ancient artwork, modern culture and technology; favourite: an old silk handicraft.",
    ),
    Q(
        "temporal",
        "What problem did Emily bring up on May 4th?",
        mb("Emily", "05-04", "preparing for an important speech"),
        answer="Nervousness about an important speech.",
    ),
    Q(
        "paraphrase",
        "Which old masters were suggested to Emily to improve her art?",
        mb("Emily", "05-03", "Leonardo da Vinci, Michelangelo, and Raphael"),
        answer="Leonardo da Vinci, Michelangelo and Raphael.",
    ),
    Q(
        "identifier",
        'What is the "Things" Museum that Emily heard of?',
        mb("Emily", "05-02", 'This museum is called the "Things" Museum'),
        answer="A small private museum collecting many different and wonderful items.",
    ),
    Q(
        "multi-hop",
        "Which novel did Emily find while studying at the library, and which love novel was she reading a few days before?",
        one(mb("Emily", "05-01", "One Hundred Years of Solitude")),
        one(mb("Emily", "04-28", '"Silent Separation"')),
        answer='"One Hundred Years of Solitude" (May 1) and "Silent Separation" (Apr 28).',
    ),
    Q(
        "paraphrase",
        "What side dishes does Emily serve alongside her fish?",
        mb("Emily", "04-29", "zucchini or broccoli"),
        answer="Zucchini or broccoli.",
    ),
    Q(
        "temporal",
        "What did Emily want to chat about yesterday?",
        mb("Emily", "05-06", "chat with you about travel"),
        today="2023-05-07",
        answer="Travel (recommendations and saving money).",
    ),
    Q(
        "identifier",
        'Which sci-fi movie did Emily recommend, the one with "stunning visuals"?',
        mb("Emily", "04-30", '"The Wandering Earth"'),
        answer='"The Wandering Earth".',
    ),
    # ------------------------------------------------------------------ Frank
    Q(
        "temporal",
        "On April 27th, how long did Frank run in the park?",
        mb("Frank", "04-27", "run in the nearby park for an hour"),
        answer="An hour.",
    ),
    Q(
        "identifier",
        "Which food program did Frank recommend?",
        mb("Frank", "04-28", '"Home Cooking" produced by CCTV'),
        answer='"Home Cooking" by CCTV.',
    ),
    Q(
        "paraphrase",
        "Where was Frank advised to go trekking outside the city?",
        mb("Frank", "04-29", "Emei Mountain, Huangshan, and Taishan"),
        answer="Emei Mountain, Huangshan and Taishan.",
    ),
    Q(
        "paraphrase",
        "What kind of tunes does Frank enjoy?",
        mb("Frank", "05-05", "especially jazz"),
        answer="Jazz.",
    ),
    Q(
        "temporal",
        "Which book was Frank reading on May 6th?",
        mb("Frank", "05-06", 'reading a book called "To Live"'),
        answer='"To Live".',
    ),
    Q(
        "temporal",
        "Why did Frank ask for ways to relieve stress on April 30th?",
        mb("Frank", "04-30", "stressed out at work lately"),
        answer="Stress at work made him anxious.",
    ),
    Q(
        "identifier",
        "Which world-history video game was suggested to Frank?",
        mb("Frank", "04-28", '"Civilization"'),
        answer='"Civilization".',
    ),
    Q(
        "paraphrase",
        "What sweet treat impressed Frank when he ate out?",
        mb("Frank", "05-04", "homemade ice cream"),
        answer="Their homemade ice cream.",
    ),
    Q(
        "multi-hop",
        "Frank was choosing gear for which sport on his first day, and how did he say his progress in it was going two days later?",
        one(mb("Frank", "04-27", "preparing equipment for rock climbing")),
        one(mb("Frank", "04-29", "learning rock climbing lately")),
        answer="Rock climbing; he felt he was not making much progress.",
    ),
    Q(
        "paraphrase",
        "How can Frank stop putting things off?",
        mb("Frank", "05-01", "breaking down tasks into smaller modules"),
        answer="Break tasks into smaller modules and set specific goals.",
    ),
    Q(
        "paraphrase",
        "What Sichuan dish did Frank make the day before?",
        mb("Frank", "04-28", "decent Kung Pao Chicken"),
        answer="Kung Pao Chicken.",
    ),
    # ------------------------------------------------------------------ Lucy
    Q(
        "paraphrase",
        "Which spot did Lucy like most on her recent city trip?",
        mb("Lucy", "04-27", "I loved Gulangyu Island"),
        answer="Gulangyu Island.",
    ),
    Q(
        "paraphrase",
        "Which pop star did Lucy see live, and what track does she like best?",
        one(mb("Lucy", "04-29", "Jay Chou's concert")),
        one(mb("Lucy", "04-29", '"Listen to Mom"')),
        answer='Jay Chou; "Listen to Mom".',
    ),
    Q(
        "paraphrase",
        "What kinds of movies is Lucy into?",
        mb("Lucy", "04-28", "I like comedies and romance films"),
        answer="Comedies and romance films.",
    ),
    Q(
        "paraphrase",
        "What food styles does Lucy like?",
        mb("Lucy", "04-30", "I prefer Sichuan and Cantonese cuisine"),
        answer="Sichuan and Cantonese.",
    ),
    Q(
        "identifier",
        'Which romance films were recommended to Lucy together with "Goodbye Mr. Loser"?',
        mb("Lucy", "04-28", '"Flipped" and "About Time"'),
        answer='"Flipped" and "About Time".',
    ),
    Q(
        "temporal",
        "On May 2nd, what did Lucy ask about learning English?",
        mb(
            "Lucy",
            "05-02",
            ("improve my listening and speaking skills", "online language learning platforms"),
        ),
        answer="Ways to improve listening and speaking: English songs, movies, talking with foreigners, online platforms.",
    ),
    Q(
        "multi-hop",
        "Lucy talked about changing jobs more than once. What did she dislike about her current job, and what was suggested when she felt confused a few days later?",
        one(mb("Lucy", "05-01", "my salary and career development prospects")),
        one(mb("Lucy", "05-04", "career planning websites and career development consultants")),
        answer="Salary and career prospects (May 1); career planning websites and consultants (May 4).",
    ),
    Q(
        "temporal",
        "Which mountains did the assistant suggest to Lucy for hiking this week?",
        mb("Lucy", "05-06", "Huangshan or Emei Mountain"),
        today="2023-05-07",
        answer="Huangshan or Emei Mountain (May 6).",
    ),
    Q(
        "identifier",
        "Which Stephen Chow films were recommended to Lucy?",
        mb("Lucy", "05-02", '"Kung Fu Hustle" or "The King of Comedy"'),
        answer='"Kung Fu Hustle" and "The King of Comedy".',
    ),
    # ------------------------------------------------------------------ Sunny
    Q(
        "paraphrase",
        "Where was Sunny hiking when a kind girl gave her something to eat?",
        one(
            mb(
                "Sunny",
                "04-27",
                ("I went to Yuntai Mountain", "a kind stranger, a girl, helped me"),
            )
        ),
        answer="Yuntai Mountain.",
    ),
    Q(
        "identifier",
        "Which training methods has Sunny been trying, HIIT and what else?",
        mb("Sunny", "04-28", "including HIIT and weight training"),
        answer="HIIT and weight training.",
    ),
    Q(
        "paraphrase",
        "Which coastal destination did the assistant propose to Sunny?",
        mb("Sunny", "04-30", "Qingdao has famous attractions"),
        answer="Qingdao.",
    ),
    Q(
        "identifier",
        'What is the movie "Crazy Alien" that was recommended to Sunny?',
        mb("Sunny", "05-03", '"Crazy Alien"'),
        answer="A comedy about an alien invasion seen by ordinary people.",
    ),
    Q(
        "temporal",
        "What was Sunny trying to learn to make on May 2nd?",
        mb("Sunny", "05-02", "learning how to make noodles"),
        answer="Noodles.",
    ),
    Q(
        "paraphrase",
        "Who praised how Sunny looks after her workouts?",
        mb("Sunny", "05-01", "My fitness trainer complimented me"),
        answer="Her fitness trainer.",
    ),
    Q(
        "multi-hop",
        "What did Sunny say about work pressure on April 29th, and what did she blame for feeling tired on May 5th?",
        one(mb("Sunny", "04-29", "under a lot of work pressure recently")),
        one(mb("Sunny", "05-05", "might not be getting enough sleep")),
        answer="Too much work pressure to handle; busy work and not enough sleep.",
    ),
    # ------------------------------------------------------------------ Jason
    Q(
        "paraphrase",
        "What was Jason's midday meal on his first day?",
        mb("Jason", "04-27", "I like making braised fish"),
        answer="Braised fish.",
    ),
    Q(
        "paraphrase",
        "Where does Jason want to go on an adventure abroad?",
        mb("Jason", "04-28", "planning a trip to New Zealand"),
        answer="New Zealand.",
    ),
    Q(
        "identifier",
        "Which mountain does Jason plan to climb next?",
        mb("Jason", "04-30", "climb Mount Huashan next"),
        answer="Mount Huashan.",
    ),
    Q(
        "temporal",
        "What did Jason register for on May 2nd?",
        mb("Jason", "05-02", "registered for a photography course"),
        answer="A photography course.",
    ),
    Q(
        "paraphrase",
        "What are the interests of the buddy Jason was buying a gift for?",
        mb("Jason", "05-04", "he likes traveling, trying new foods, and famous painters"),
        answer="Traveling, trying new foods and famous painters.",
    ),
    Q(
        "paraphrase",
        "What kinds of food does Jason enjoy the most?",
        mb("Jason", "04-29", "Chinese food and Japanese cuisine"),
        answer="Chinese and Japanese food, especially barbecue and sushi.",
    ),
    Q(
        "multi-hop",
        "Which film was suggested to Jason for his movie night with friends, and which other user later said he watched that same film?",
        one(mb("Jason", "04-27", '"The Shawshank Redemption" might be a good choice')),
        one(
            mb("John-Zhang", "05-01", 'a great movie called "The Shawshank Redemption"'),
            mb("Leo", "05-02", 'I watched "The Shawshank Redemption"'),
        ),
        answer="The Shawshank Redemption; John Zhang (May 1) and Leo (May 2) watched it.",
    ),
    Q(
        "temporal",
        "What career problem did Jason describe yesterday?",
        mb("Jason", "05-05", "working at my current company for several years"),
        today="2023-05-06",
        answer="Bored after several years at his company; unsure whether to change jobs.",
    ),
    # ------------------------------------------------------------------ John Zhang
    Q(
        "identifier",
        'Who learned to cook "Hui Guo Rou"?',
        mb("John-Zhang", "04-30", 'a new dish called "Hui Guo Rou"'),
        answer="John Zhang (Apr 30).",
    ),
    Q(
        "temporal",
        "What love movie did John Zhang watch at the cinema on May 4th?",
        mb("John-Zhang", "05-04", 'a love movie called "Titanic"'),
        answer='"Titanic".',
    ),
    Q(
        "identifier",
        "Which psychology book did John Zhang buy at the bookstore?",
        mb("John-Zhang", "05-06", '"Emotional Intelligence"'),
        answer='"Emotional Intelligence".',
    ),
    Q(
        "paraphrase",
        "What new activity with guns has John Zhang started?",
        one(
            mb("John-Zhang", "04-29", "I started learning how to shoot"),
            mb("John-Zhang", "05-02", "went to a shooting range"),
        ),
        answer="Shooting.",
    ),
    Q(
        "paraphrase",
        "What climate does John Zhang enjoy?",
        mb("John-Zhang", "04-28", "I like sunny and warm weather"),
        answer="Sunny and warm.",
    ),
    Q(
        "identifier",
        'Which user watched "Looking Up" and when?',
        mb("John-Zhang", "04-28", '"Looking Up"'),
        answer="John Zhang, the night before Apr 28.",
    ),
    # ------------------------------------------------------------------ Ivy
    Q(
        "paraphrase",
        "How big is the sports team Ivy formed with coworkers?",
        mb("Ivy", "04-27", "About eight people"),
        answer="About eight colleagues.",
    ),
    Q(
        "paraphrase",
        "What did Ivy put in the sauce for the fish she cooked?",
        mb("Ivy", "04-28", "vinegar, sugar, soy sauce, ginger, and garlic"),
        answer="Vinegar, sugar, soy sauce, ginger and garlic.",
    ),
    Q(
        "paraphrase",
        "Which places abroad did the assistant tell Ivy to visit?",
        mb("Ivy", "04-29", "Paris, France to visit the Louvre"),
        answer="Paris, Rome and Amsterdam.",
    ),
    Q(
        "temporal",
        "Why did Ivy feel disappointed on May 4th?",
        mb("Ivy", "05-04", "Today is my birthday, but due to the pandemic"),
        answer="Her birthday, and she could not celebrate with family and friends due to the pandemic.",
    ),
    Q(
        "identifier",
        'In "The Pursuit of Happyness", as Ivy told it, who is the father?',
        mb("Ivy", "05-06", "a unemployed father named Chris Gardner"),
        answer="Chris Gardner.",
    ),
    Q(
        "paraphrase",
        "How multilingual did the assistant claim to be when Ivy asked?",
        mb("Ivy", "05-01", "more than 50 languages"),
        answer="More than 50.",
    ),
    Q(
        "multi-hop",
        "Ivy brought up switching jobs on two different days. Which days, and what advice did she get the second time?",
        one(mb("Ivy", "04-30", "considering finding a new job lately")),
        one(
            mb(
                "Ivy",
                "05-03",
                ("whether or not to switch jobs", "carefully weigh the pros and cons"),
            )
        ),
        answer="Apr 30 and May 3; weigh the pros and cons and compare with other opportunities.",
    ),
    # ------------------------------------------------------------------ Jack
    Q(
        "identifier",
        'What is "Police Story" about, according to Jack?',
        mb("Jack", "04-30", 'called "Police Story,"'),
        answer="Police chasing criminals.",
    ),
    Q(
        "paraphrase",
        "Where does Jack dream of going to take pictures of nature?",
        mb("Jack", "05-01", "Jiuzhaigou and Guilin"),
        answer="Jiuzhaigou and Guilin.",
    ),
    Q(
        "temporal",
        "What was Jack celebrating on May 4th?",
        mb("Jack", "05-04", "today is my birthday and I am very happy"),
        answer="His birthday.",
    ),
    Q(
        "identifier",
        'Who watched "Manchester by the Sea" and what did they think?',
        mb("Jack", "05-03", '"Manchester by the Sea"'),
        answer="Jack: very intriguing, excellent acting.",
    ),
    Q(
        "paraphrase",
        "What sort of music does Jack like best?",
        mb("Jack", "05-05", "My favorite music genres are rock and pop"),
        answer="Rock and pop.",
    ),
    Q(
        "paraphrase",
        "How does Jack like to spend time outside?",
        mb("Jack", "05-06", "My favorite outdoor activities are hiking and cycling"),
        answer="Hiking and cycling.",
    ),
    Q(
        "multi-hop",
        "Which of the users said it was their birthday during these chats, and on what dates?",
        one(mb("Jack", "05-04", "today is my birthday and I am very happy")),
        one(mb("Ivy", "05-04", "Today is my birthday, but due to the pandemic")),
        one(mb("Luna", "05-02", "today is my birthday, and I wanted to share")),
        answer="Jack (May 4), Ivy (May 4) and Luna (May 2).",
    ),
    Q(
        "paraphrase",
        "What did Jack cook that his relatives praised?",
        mb("Jack", "05-02", "I made kung pao chicken and my family said"),
        answer="Kung pao chicken.",
    ),
    # ------------------------------------------------------------------ Leo
    Q(
        "identifier",
        "Which works by Johann Sebastian Bach does Leo listen to?",
        mb("Leo", "04-27", "Bach's Orchestral Suites"),
        answer="The Orchestral Suites (and Chopin's piano works).",
    ),
    Q(
        "temporal",
        "What did Leo cook on April 29th?",
        mb("Leo", "04-29", "tomato and egg stir fry"),
        answer="A tomato and egg stir fry.",
    ),
    Q(
        "paraphrase",
        "What happened at work that made Leo feel undervalued?",
        mb(
            "Leo",
            "05-01",
            "My boss gave a project that I thought was very important to someone else",
        ),
        answer="The boss gave an important project to someone else without explanation.",
    ),
    Q(
        "identifier",
        "Which meditation apps were recommended to Leo?",
        mb("Leo", "05-04", "Headspace and Calm"),
        answer="Headspace and Calm.",
    ),
    Q(
        "paraphrase",
        "What moment in the prison film touched Leo the most?",
        mb("Leo", "05-02", "listened to music in the prison yard"),
        answer="Andy and his friends listening to music in the prison yard.",
    ),
    Q(
        "paraphrase",
        "Where did Leo walk by himself on a solitary sightseeing trip?",
        mb("Leo", "04-30", "I went to an ancient city"),
        answer="An ancient city.",
    ),
    Q(
        "identifier",
        'Which user enjoys "Walden" and "The Kite Runner"?',
        mb("Leo", "05-03", '"Walden" and "The Kite Runner"'),
        answer="Leo.",
    ),
    # ------------------------------------------------------------------ Linda
    Q(
        "identifier",
        "Which TV series did Linda start watching?",
        mb("Linda", "04-28", '"Awakening Age"'),
        answer='"Awakening Age".',
    ),
    Q(
        "identifier",
        "Which note-taking software was suggested to Linda?",
        mb("Linda", "04-28", "note-taking software like OneNote"),
        answer="OneNote.",
    ),
    Q(
        "paraphrase",
        "Which city did Linda mention when asking how to progress faster in her practice?",
        mb("Linda", "04-29", "yoga classes in Los Angeles"),
        answer="Los Angeles.",
    ),
    Q(
        "temporal",
        "What did Linda buy on May 2nd?",
        mb("Linda", "05-02", "I bought a new white dress"),
        answer="A new white dress.",
    ),
    Q(
        "paraphrase",
        "Which cities are on Linda's upcoming European itinerary, and how long is she staying?",
        one(mb("Linda", "05-04", "Madrid, Barcelona, and Granada")),
        one(mb("Linda", "05-04", "stay in Spain for about two weeks")),
        answer="Madrid, Barcelona and Granada, for about two weeks.",
    ),
    Q(
        "multi-hop",
        "Linda planned two trips abroad. Which countries, and what did she want to see in the first?",
        one(mb("Linda", "05-01", "a trip to Mexico")),
        one(mb("Linda", "05-04", "I want to go to Spain next month")),
        answer="Mexico (culture, art, architecture, street food) and Spain.",
    ),
    Q(
        "paraphrase",
        "What was bothering Linda physically?",
        mb("Linda", "05-05", "feeling tired and low on energy"),
        answer="Tiredness, low energy, weight gain and stomach discomfort.",
    ),
    Q(
        "identifier",
        "Who is Meursault, in Linda's reading?",
        mb("Linda", "05-06", "the protagonist Meursault"),
        answer='The protagonist of "The Stranger".',
    ),
    # ------------------------------------------------------------------ Luna
    Q(
        "entity",
        "Who asked to be called Lulu?",
        mb("Luna", "04-27", "you can call me Lulu"),
        answer="Luna.",
    ),
    Q(
        "identifier",
        'What is "Dangal" about?',
        mb("Luna", "04-28", 'It\'s called "Dangal"'),
        answer="A father pursuing his wrestling dreams through his daughter.",
    ),
    Q(
        "paraphrase",
        "What position did Luna apply to?",
        mb("Luna", "05-01", "I applied for an editing job"),
        answer="An editing job.",
    ),
    Q(
        "temporal",
        "How did Luna plan to celebrate on May 2nd?",
        mb("Luna", "05-02", "go out to dinner and chat with a few friends"),
        answer="Dinner out with a few friends (her birthday).",
    ),
    Q(
        "paraphrase",
        "Which beverage is Luna learning about and collecting?",
        mb("Luna", "04-29", "I've been collecting tea"),
        answer="Tea.",
    ),
    Q(
        "paraphrase",
        "What book-length project is Luna writing?",
        mb("Luna", "05-04", "I'm working on a novel"),
        answer="A novel.",
    ),
    Q(
        "paraphrase",
        "What romantic uncertainty is troubling Luna?",
        mb("Luna", "05-06", "long-term ambiguous relationship"),
        answer="An ambiguous relationship; unsure whether he has feelings for her.",
    ),
    Q(
        "temporal",
        "What did Luna want to write an essay about ten days ago?",
        mb("Luna", "04-27", "an essay about city life"),
        today="2023-05-07",
        answer="City life.",
    ),
    # ------------------------------------------------------------------ Roland
    Q(
        "paraphrase",
        "What would Roland's ideal recording space be like?",
        mb("Roland", "04-27", "a studio with a high degree of privacy"),
        answer="A private, quiet studio equipped with music production tools.",
    ),
    Q(
        "identifier",
        "Which video games were recommended to Roland?",
        one(
            mb("Roland", "04-30", 'such as "Arknights" and "Tekken," which are very popular'),
            mb("Roland", "04-30", 'like "Arknights" and "Tekken" that are very popular'),
        ),
        answer='"Arknights" and "Tekken".',
    ),
    Q(
        "temporal",
        "What good news did Roland share on May 1st?",
        mb("Roland", "05-01", ("I just passed an interview", "an emerging internet company")),
        answer="He passed an interview at an emerging internet company.",
    ),
    Q(
        "paraphrase",
        "Why did Roland feel sad about a buddy?",
        mb("Roland", "05-02", "moving to another city"),
        answer="The friend is moving to a distant city.",
    ),
    Q(
        "paraphrase",
        "How can Roland feel fresher at work on a hot day with no AC?",
        mb("Roland", "05-05", "wash your face or use a damp towel"),
        answer="Deep breaths, wash his face or use a damp towel, wear cotton clothes.",
    ),
    Q(
        "paraphrase",
        "What childhood pastimes does Roland want to revisit?",
        mb("Roland", "05-06", "playing video games, watching anime, playing with toys"),
        answer="Video games, anime and toys.",
    ),
    Q(
        "multi-hop",
        "What was Roland worried about while job hunting, and how did it turn out?",
        one(mb("Roland", "04-29", "I've been looking for a job recently")),
        one(mb("Roland", "05-01", "I just passed an interview")),
        answer="Not finding a good job (Apr 29); he passed an interview (May 1).",
    ),
    # ------------------------------------------------------------------ Susan
    Q(
        "identifier",
        "Which rock bands does Susan like?",
        mb("Susan", "04-27", "AC/DC and Guns N' Roses"),
        answer="AC/DC and Guns N' Roses.",
    ),
    Q(
        "identifier",
        'Who recently listened to "You Shook Me All Night Long"?',
        mb("Susan", "04-27", '"You Shook Me All Night Long."'),
        answer="Susan.",
    ),
    Q(
        "paraphrase",
        "What inspired Susan's artwork that got into the show?",
        one(mb("Susan", "04-30", ("one of my paintings was selected", "a trip I took to Tibet"))),
        answer="A trip to Tibet and its landscapes.",
    ),
    Q(
        "identifier",
        "How long are the work intervals of the Pomodoro timer suggested to Susan?",
        mb("Susan", "05-01", "25-minute intervals"),
        answer="25 minutes, then a 5-minute rest.",
    ),
    Q(
        "paraphrase",
        "Which meal did Susan make that she felt lacked something?",
        mb("Susan", "04-27", "beef stew with potatoes"),
        answer="Beef stew with potatoes.",
    ),
    Q(
        "temporal",
        "What was the weather like for Susan on May 4th?",
        mb("Susan", "05-04", "raining all day"),
        answer="Raining all day.",
    ),
    Q(
        "paraphrase",
        "Where could Susan go boating down a river?",
        mb("Susan", "05-03", "Li River rafting trip in Guilin"),
        answer="The Li River in Guilin.",
    ),
    # ------------------------------------------------------------------ Gary
    Q(
        "paraphrase",
        "Where does Gary go to feel like he is flying?",
        mb("Gary", "04-27", "I went to the racetrack"),
        answer="The racetrack.",
    ),
    Q(
        "temporal",
        "What new dish did Gary learn to cook on April 28th?",
        mb("Gary", "04-28", "Spicy Pork Tripe"),
        answer="Spicy Pork Tripe.",
    ),
    Q(
        "identifier",
        "Which Grand Prix races were recommended to Gary?",
        mb("Gary", "04-30", "Montreal Grand Prix"),
        answer="Montreal, Misano (Italy) and Monaco.",
    ),
    Q(
        "identifier",
        "Which British TV show was suggested to Gary?",
        mb("Gary", "05-03", 'watching "Doctor Who,"'),
        answer='"Doctor Who".',
    ),
    Q(
        "identifier",
        'Who is "Sheep Cooking"?',
        mb("Gary", "05-05", '"Sheep Cooking"'),
        answer="A Bilibili food blogger recommended to Gary.",
    ),
    Q(
        "paraphrase",
        "What outfit suits Gary's upcoming work dinner?",
        mb("Gary", "04-30", "a traditional black suit with a white shirt and tie"),
        answer="A traditional black suit, white shirt and tie.",
    ),
    Q(
        "paraphrase",
        "What should Gary drink with fish?",
        mb("Gary", "05-02", "White wine is crisp and aromatic"),
        answer="White wine such as Pinot Grigio or Chardonnay.",
    ),
    Q(
        "identifier",
        'Which book with "Peaceful Warrior" in its title was recommended, and to whom?',
        mb("Gary", "05-04", '"Way of the Peaceful Warrior'),
        answer="Gary (May 4).",
    ),
    # ------------------------------------------------------------------ Henry
    Q(
        "paraphrase",
        "What coding idea confused Henry?",
        mb("Henry", "05-06", "trouble understanding the concept of functions"),
        answer="Functions.",
    ),
    Q(
        "identifier",
        'Which books were recommended to Henry together with "Hackers and Painters"?',
        mb("Henry", "05-04", '"Hackers and Painters"'),
        answer='"1984", "Sapiens" and "Psychology and Life".',
    ),
    Q(
        "temporal",
        "What did Henry see people doing in the park on April 29th?",
        mb("Henry", "04-29", "saw many people flying kites"),
        answer="Flying kites.",
    ),
    Q(
        "paraphrase",
        "What pork dish was Henry told to try?",
        mb("Henry", "04-28", "sweet and sour pork ribs can be really good"),
        answer="Sweet and sour pork ribs.",
    ),
    Q(
        "paraphrase",
        "Where did Henry go to beat the heat?",
        mb("Henry", "04-30", "went to the swimming pool to cool off"),
        answer="The swimming pool.",
    ),
    Q(
        "paraphrase",
        "What instrument is Henry learning to play?",
        mb("Henry", "04-30", "practicing playing the guitar"),
        answer="The guitar.",
    ),
    Q(
        "multi-hop",
        "Which popular-science book came up for both Henry and Linda?",
        one(mb("Henry", "05-04", '"Sapiens"')),
        one(mb("Linda", "05-06", '"A Brief History of Time" and "Sapiens"')),
        answer='"Sapiens".',
    ),
    # ------------------------------------------------------------------ entity (MemoryBank users)
    Q(
        "entity",
        "Tell me about Frank's hobbies.",
        mb("Frank", "04-27", "I like hiking, long-distance running, basketball"),
        answer="Hiking, long-distance running, basketball, military history, rock climbing.",
    ),
    Q(
        "entity",
        "What are Susan's interests?",
        mb("Susan", "04-27", "I quite like playing guitar, listening to rock music"),
        answer="Guitar, rock music, photography, painting, poetry.",
    ),
    Q(
        "entity",
        "What does Sunny like doing?",
        mb("Sunny", "04-27", "I like singing, dancing, working out"),
        answer="Singing, dancing, working out, traveling, movies, photography.",
    ),
    Q(
        "entity",
        "Which sports is Jason into?",
        mb("Jason", "04-27", "I also like scuba diving, skiing, running"),
        answer="Swimming, scuba diving, skiing, running, hiking, rock climbing.",
    ),
    Q(
        "entity",
        "What are Roland's hobbies?",
        one(
            mb(
                "Roland",
                "04-27",
                (
                    "I like activities such as skateboarding",
                    "I also like music production and movies",
                ),
            )
        ),
        answer="Skateboarding, climbing, dancing, music production, movies.",
    ),
    Q(
        "entity",
        "Tell me about Gary.",
        one(
            mb("Gary", "04-27", "I also like business, chess, painting, and fine wine"),
            mb("Gary", "04-27", "today I went to the racetrack"),
        ),
        answer="Likes racing, business, chess, painting and fine wine.",
    ),
    Q(
        "entity",
        "Tell me about Luna's hobbies.",
        mb("Luna", "04-27", "I enjoy listening to classical music, watching art films"),
        answer="Classical music, art films, writing, tea, collecting.",
    ),
    Q(
        "entity",
        "What do we know about Linda's job?",
        one(
            mb("Linda", "04-27", "My job is stable but not exciting at all"),
            mb("Linda", "05-03", "My boss is very demanding"),
        ),
        answer="Stable but unexciting; a demanding, critical boss.",
    ),
    # ------------------------------------------------------------------ fixtures: identifiers
    Q(
        "identifier",
        "What was merged in PR #412?",
        one(
            fx("memory/2025-11-12.md", "merged in PR #412"),
            fx("memory/2025-11-12.md", "PR #412: deterministic idempotency keys"),
        ),
        answer="Deterministic idempotency keys in payment_processor (the double-charge fix).",
    ),
    Q(
        "identifier",
        "Why did creating charges_order_intent_succeeded_key fail on staging?",
        fx(
            "memory/2025-11-12.md",
            (
                'could not create unique index "charges_order_intent_succeeded_key"',
                "is duplicated.",
            ),
        ),
        answer="Staging had duplicate rows from the incident replay; cleaned with make db-reset-staging.",
    ),
    Q(
        "identifier",
        "Which flight did Peter take from Lisbon to Vienna?",
        fx("memory/2025-11-14.md", "TAP TP 1272"),
        answer="TAP TP 1272 on Sat Nov 15, landing 19:45.",
    ),
    Q(
        "identifier",
        "What is KEYWORD_FLOOR set to?",
        fx("memory/2025-11-11.md", "`KEYWORD_FLOOR` is 0.9"),
        answer="0.9.",
    ),
    Q(
        "identifier",
        "Where were the webhook_dead_letter rows archived?",
        one(
            fx("memory/2025-11-18.md", ("Archived 1,204 old", "and truncated the table.")),
            fx("memory/2025-11-18.md", "B @payments-service: I archived 1,204"),
        ),
        answer="s3://pay-archive/dead-letter-2023.jsonl.gz",
    ),
    Q(
        "identifier",
        "What does DEC-0059 decide?",
        one(
            fx("memory/2025-11-25.md", "Wrote it down as **DEC-0059**"),
            fx("memory/2025-11-25.md", "O(c=0.2) @Peter @warelay"),
            fx("bank/world.md", "CLI stays TypeScript (DEC-0059)"),
            fx("bank/entities/warelay.md", "The CLI stays TypeScript — DEC-0059"),
        ),
        answer="The warelay CLI stays TypeScript; revisit in 2026.",
    ),
    Q(
        "identifier",
        "What runs on castle-01?",
        one(
            fx("memory/2025-11-07.md", "`castle-01` — Intel NUC"),
            fx("bank/entities/The-Castle.md", "`castle-01` (Intel NUC"),
        ),
        answer="Intel NUC, Ubuntu 24.04: the self-hosted GitHub Actions runner; nightly restic backup.",
    ),
    Q(
        "identifier",
        "Which values file does the pay-tyo1 deploy use?",
        one(
            fx("memory/2025-11-26.md", "values-tyo1.yaml"),
            fx("memory/2025-11-24.md", "values ファイルは `values-tyo1.yaml` です"),
        ),
        answer="charts/payments-service/values-tyo1.yaml",
    ),
    # ------------------------------------------------------------------ fixtures: entity, temporal
    Q(
        "entity",
        "Who is Andy?",
        one(fx("bank/entities/Andy.md", ("# Andy", "Typography nerd."))),
        answer="Peter's old friend from London, a graphic designer who drew the warelay logo.",
    ),
    Q(
        "entity",
        "What is warelay?",
        one(
            fx(
                "bank/entities/warelay.md",
                ("Peter's open-source WhatsApp relay", "Has a small local memory search"),
            )
        ),
        answer="Peter's open-source WhatsApp relay (Node 20, Baileys) plus a CLI.",
    ),
    Q(
        "temporal",
        "What happened on the Hetzner cutover day?",
        one(
            fx("memory/2025-11-20.md", "W @payments-service: From 2025-11-20"),
            fx("memory/2025-11-20.md", "B @payments-service: I migrated payments-service"),
            fx("memory/2025-11-20.md", ("## Log", "11:30 — ECS service scaled to 0")),
        ),
        answer="Nov 20: payments-service moved to Hetzner pay-fsn1, DNS flipped 08:47, ECS scaled to 0.",
    ),
    Q(
        "temporal",
        "What did Linh do on Nov 28?",
        one(
            fx("memory/2025-11-28.md", "- Linh: the partner bank delivered"),
            fx("memory/2025-11-28.md", "W @Linh @payments-service: The partner bank delivered"),
        ),
        answer="Received the VietQR sandbox credentials and ran the first sandbox payout (50.000 ₫).",
    ),
    Q(
        "temporal",
        "What was the warelay send cold start after lazy-loading Baileys?",
        one(
            fx("memory/2025-11-25.md", "| warelay main (lazy Baileys)"),
            fx("memory/2025-11-25.md", "B @warelay: I made the warelay CLI lazy-load"),
        ),
        answer="41.3 ms (from 182.4 ms).",
    ),
    # ------------------------------------------------------------------ Vietnamese
    Q(
        "vietnamese",
        "Ai là quản lý sản phẩm thanh toán bên ngân hàng đối tác?",
        fx("memory/2025-11-18.md", "anh Tuấn (quản lý sản phẩm thanh toán"),
        answer="Anh Tuấn.",
    ),
    Q(
        "vietnamese",
        "ngan hang gui file doi soat luc may gio",
        one(
            fx("memory/2025-11-18.md", "ngân hàng gửi file đối soát mỗi ngày lúc 06:00"),
            fx("memory/2025-11-20.md", "(CSV, one file per day at 06:00)"),
        ),
        answer="06:00 mỗi ngày, quyết toán T+1.",
    ),
    Q(
        "vietnamese",
        "Callback của ngân hàng phải được ký bằng gì?",
        one(
            fx("memory/2025-11-18.md", "phải được ký bằng HMAC-SHA256 và phải phản hồi"),
            fx("memory/2025-11-18.md", "W @payments-service: Thanh toán VietQR"),
        ),
        answer="HMAC-SHA256.",
    ),
    Q(
        "vietnamese",
        "khi nao ngan hang cap moi truong sandbox",
        one(fx("memory/2025-11-18.md", "họ hứa cấp thông tin đăng nhập trước ngày 28/11")),
        answer="Trước ngày 28/11 (đã cấp ngày 28/11).",
    ),
    Q(
        "vietnamese",
        "Văn phòng của ngân hàng đối tác nằm trên phố nào?",
        fx("memory/2025-11-18.md", "trên phố Lý Thường Kiệt"),
        answer="Phố Lý Thường Kiệt, quận Hoàn Kiếm.",
    ),
    Q(
        "vietnamese",
        "Nếu callback không phản hồi trong 5 giây thì ngân hàng làm gì?",
        fx(
            "memory/2025-11-18.md",
            ("phải phản hồi trong vòng 5 giây", "họ sẽ gửi lại tối đa 3 lần"),
        ),
        answer="Gửi lại tối đa 3 lần.",
    ),
    Q(
        "vietnamese",
        "Buổi họp với ngân hàng kéo dài bao lâu?",
        fx("memory/2025-11-18.md", "kéo dài khoảng một tiếng rưỡi"),
        answer="Khoảng một tiếng rưỡi.",
    ),
    Q(
        "vietnamese",
        "viec tiep theo cua Linh sau buoi hop la gi",
        one(
            fx(
                "memory/2025-11-18.md",
                ("- [x] gửi biên bản họp cho anh Tuấn", "chuẩn bị mẫu callback có chữ ký HMAC"),
            ),
            fx(
                "memory/2025-11-18.md",
                (
                    "Việc tiếp theo: mình đã đặt lịch họp lần hai",
                    "chốt quy trình đối soát và định dạng callback",
                ),
            ),
        ),
        answer="Gửi biên bản, viết bản nháp DEC cho đối soát VietQR, chuẩn bị mẫu callback HMAC; họp lần hai.",
    ),
    # ------------------------------------------------------------------ CJK (Japanese)
    Q(
        "cjk",
        "東京リージョンの月額コストの見込みはいくらですか？",
        one(
            fx("memory/2025-11-24.md", "コストは月 ¥120,000 程度の見込みです"),
            fx("memory/2025-11-24.md", "- Cost ~¥120,000/month"),
        ),
        answer="月 ¥120,000 程度（約 €730）。",
    ),
    Q(
        "cjk",
        "フランクフルト経由だと往復のレイテンシはどれくらいですか",
        fx("memory/2025-11-24.md", "フランクフルト経由だと往復 250ms 以上"),
        answer="往復 250ms 以上。",
    ),
    Q(
        "cjk",
        "ステージング環境での結合テストはいつですか",
        one(
            fx("memory/2025-11-24.md", "11月25日（火）：ステージング環境で結合テスト"),
            fx("memory/2025-11-25.md", "Kenji ran the integration tests on `pay-tyo1` staging"),
        ),
        answer="11月25日（火）。",
    ),
    Q(
        "cjk",
        "東京の決済サービスのデータベースは何ですか",
        fx("memory/2025-11-24.md", "データベースは RDS for PostgreSQL 16"),
        answer="RDS for PostgreSQL 16（Multi-AZ）、EU とは分離。",
    ),
    Q(
        "cjk",
        "本番デプロイ後の p95 レイテンシは？",
        fx("memory/2025-11-26.md", "p95 レイテンシは 64ms"),
        answer="64ms。",
    ),
    Q(
        "cjk",
        "JPY のゼロ小数通貨対応はどのバージョンですか",
        one(
            fx("memory/2025-11-24.md", ("JPY はゼロ小数通貨なので", "v2.4.0 で対応予定です")),
            fx(
                "memory/2025-11-26.md", "W @payments-service: payments-service v2.4.0 (zero-decimal"
            ),
            fx("bank/world.md", "Current release: v2.4.0 (zero-decimal JPY/VND)"),
        ),
        answer="v2.4.0。",
    ),
    Q(
        "cjk",
        "なぜ決済サービスは日本国内で動かすべきですか",
        one(
            fx(
                "memory/2025-11-24.md",
                (
                    "また、東京の加盟店はレイテンシにとても敏感です",
                    "決済サービスは国内で動かすべきだと考えています",
                ),
            ),
            fx("memory/2025-11-24.md", "O(c=0.8) @Kenji"),
            fx("memory/2025-11-24.md", ("国内のカード決済代行会社", "必要があります。")),
        ),
        answer="東京の加盟店はレイテンシに敏感（フランクフルト経由で往復 250ms 以上）、カード情報は国内に置く必要。",
    ),
    Q(
        "cjk",
        "東京",
        one(
            fx("memory/2025-11-24.md", "## Kenji のメモ — 東京リージョンへのデプロイ計画"),
            fx("memory/2025-11-26.md", "東京リージョンへの本番デプロイは無事完了しました"),
            fx("memory/2025-11-26.md", "W @Kenji @payments-service"),
            fx("memory/2025-11-24.md", "W @Kenji @payments-service"),
            fx("bank/entities/Kenji.md", "Infra engineer in Tokyo (東京, JST)"),
        ),
        answer="Any passage about Tokyo (a one-word CJK query).",
    ),
    # ------------------------------------------------------------------ none
    Q("none", "What did Emily say about her trip to Paris?"),
    Q("none", "Which car did Gary buy?"),
    Q("none", "Did Susan adopt a dog?"),
    Q("none", "What did John Zhang talk about on May 5th?"),
    Q("none", "What did Lucy think of Joker after she watched it?"),
    Q("none", "What is Frank's marathon personal best?"),
    Q("none", "Where did Linda go skiing in the Alps?"),
    Q("none", "What is Kenji's favourite sushi restaurant in Shibuya?"),
    Q("none", "Who won the chess tournament that Gary entered?"),
    Q("none", "What did Jack name his new puppy?"),
    Q("none", "When is Luna's wedding?"),
    Q("none", "What was the result of Roland's second-round interview?"),
    Q("none", "Linh đã đi du lịch Đà Nẵng khi nào?"),
    Q("none", "大阪リージョンへの移行はいつですか？"),
    Q("none", "How much did the Berlin office lease cost Peter?"),
]
