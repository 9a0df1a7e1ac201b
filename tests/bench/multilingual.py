"""Multilingual benchmark (issue 34, "memory in the user's language"): is a fact said in Chinese, Japanese,
Spanish, German, French, Russian or Arabic found again when asked in that language, in English, and the other way
round?

A set written by hand as data in this module (deterministic, nothing downloaded, no model writes it):

- FACTS: at least 40 personal and project facts in each of the seven languages, each with a question in its own
  language as a user would ask it (allergies, family names, tools chosen, trips, cars, rents, addresses, deadlines,
  preferences...). Six of each language's facts also carry an English question ("en>xx").
- ENGLISH: English facts with an English question (the control, "en") and a question in one of the seven
  languages ("xx>en"), six per language.
- Ordinary notes: everyday notes from templates with varied fillers, in the seven languages and English, that
  share the facts' vocabulary (other people, the same cities, numbers, tools and project names) but answer no
  question. The people in notes are never the people of a fact (test_multilingual.py checks it).

Every question has exactly one stored memory that answers it, across all languages: no two facts state the same
thing about the same person or project, so an English question over a Chinese fact has one right answer even in a
store that holds all eight languages.

Facts and notes are split in two halves by index parity (A even, B odd; facts within each language's list).
Per half, in a fresh store in a temporary folder, through the real product (`tiers.memory.Memory` with
`MemorySettings()` and the real embedder): every note and fact goes in one at a time through `Memory.remember`,
in the order of their dates (facts over the last five months, notes over the last seven); then every question
through `Memory.recall`, once at limit 10 (ranked first, within the first three) and once at `max_tokens=256`
(limit 50, as the recall tool with a budget; the answer's memory among what is returned, the budget checked on
`packed.text` by its own count, `Packed.tokens`: 4 characters a token in Latin script, more in others, see
tiers/text/measure.py).

    PYTHONPATH=. .venv/bin/python -m tests.bench.multilingual --half both
    PYTHONPATH=. .venv/bin/python -m tests.bench.multilingual --half both --model multilingual
    PYTHONPATH=. .venv/bin/python -m tests.bench.multilingual --half A --limit-facts 5 --notes 40
    PYTHONPATH=. .venv/bin/python -m tests.bench.multilingual --half A --set kind_match=0 updates=False

`--embedder module:Class` (or `path/to/file.py:Class`) measures any class implementing the `Embedder` protocol
of tiers/model/embedder.py, constructed with no arguments (its `load()` is called when it has one), without changing
the product; `--model NAME` is the product's embedder as MEMTIERS_EMBED_MODEL names it (`default`, `multilingual`),
made by tiers/model/catalog.py.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.util
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.bench import packages

SEED = 34
NOW = datetime(2026, 12, 8, 18, 0, tzinfo=UTC)
FACT_SPAN = timedelta(days=150)  # facts: said over the last five months
NOTE_SPAN = timedelta(days=210)  # ordinary notes: the last seven
LIMIT = 10
TOP = 3
BUDGET = 256
BUDGET_LIMIT = 50  # the recall tool's default limit when max_tokens is given (as tests/bench/locomo.py)
NOTES_PER_LANGUAGE = 150

LANGUAGES = ("zh", "ja", "es", "de", "fr", "ru", "ar")
LANGUAGE_NAMES = {
    "zh": "Chinese",
    "ja": "Japanese",
    "es": "Spanish",
    "de": "German",
    "fr": "French",
    "ru": "Russian",
    "ar": "Arabic",
    "en": "English",
}
CROSS_EN = "en>xx"  # an English question over a fact in another language
CROSS_XX = "xx>en"  # a question in another language over an English fact
CASES = (*LANGUAGES, "en", CROSS_EN, CROSS_XX)
CASE_NAMES = {
    **{lang: f"{LANGUAGE_NAMES[lang]} ({lang})" for lang in LANGUAGES},
    "en": "English (en, control)",
    CROSS_EN: "English question, fact in another language",
    CROSS_XX: "question in another language, English fact",
}

# ---------------------------------------------------------------------------------------------------------------
# The set: (fact, question in its language[, English question])

FACTS: dict[str, tuple[tuple[str, ...], ...]] = {
    "zh": (
        ("我对花生过敏，吃一点就会起疹子。", "我对哪种食物过敏来着？", "What food am I allergic to?"),
        ("我女儿叫林小雨，今年六岁了。", "我女儿叫什么名字？", "What's my daughter's name?"),
        ("Orion 项目最后定了用 PostgreSQL 做数据库，不用 MongoDB 了。", "Orion 用的是哪个数据库？"),
        ("国庆节我们全家去云南大理玩五天。", "国庆假期我们打算去哪儿旅游？"),
        ("我的车是一辆白色的比亚迪汉，车牌尾号 372。", "我开的是什么车？", "What car do I drive?"),
        ("现在的房租是每月 6500 元，每个季度初交一次。", "我每个月房租多少钱？", "How much is my monthly rent?"),
        ("我爸妈住在杭州西湖区文三路 88 号。", "我父母家的地址是什么？"),
        ("季度财报必须在 4 月 15 日之前交给王经理。", "季度财报最晚哪天要交？"),
        ("我喝咖啡不加糖，要燕麦奶。", "帮我点咖啡的话要注意什么？"),
        ("我家的猫叫汤圆，是只橘猫。", "我家猫叫什么？", "What is my cat called?"),
        ("我的牙医是协和医院的赵医生。", "我看牙一般找哪位医生？"),
        ("我老婆的生日是 11 月 3 号。", "我太太哪天过生日？"),
        ("每周三晚上七点我去上游泳课。", "我的游泳课是星期几？"),
        ("我是 O 型血。", "我的血型是什么？"),
        ("儿子的班主任是陈老师，教语文的。", "我儿子的班主任姓什么？"),
        ("我们团队的代码都放在 GitLab 上，不用 GitHub。", "我们团队的代码托管在哪个平台？"),
        ("上个月在京东买的戴尔显示器，保修到 2027 年 8 月。", "那台显示器的保修什么时候到期？"),
        ("我弟弟张伟在深圳腾讯做前端开发。", "我弟弟在哪家公司上班？"),
        ("晚上十一点以后我不看工作消息。", "几点以后别给我发工作上的事？"),
        ("下周五坐国航 CA1831，早上八点从首都机场起飞。", "下周五那趟航班的航班号是多少？"),
        ("我的健身私教叫刘强，每周二和周四带我练。", "我的私教叫什么名字？"),
        ("家里的宽带是电信的，月费 120 元。", "家里宽带是哪家运营商的？"),
        ("我最喜欢的馆子是簋街的胡大饭馆，每次都点麻辣小龙虾。", "我最爱去哪家饭店吃饭？"),
        ("我妈有高血压，每天早上吃一片氨氯地平。", "我妈每天吃的降压药叫什么？"),
        ("Lighthouse 的后端从 Flask 换成了 FastAPI。", "Lighthouse 后端现在用的什么框架？"),
        ("我的护照明年 3 月到期，得提前去出入境办换。", "我的护照什么时候过期？"),
        ("房东姓孙，有事先发微信给他。", "房东姓什么？"),
        ("我不吃香菜，点外卖记得备注。", "点外卖的时候要备注不放什么？"),
        ("女儿的钢琴课在每周六上午十点，老师姓黄。", "女儿几点上钢琴课？"),
        ("公司年会定在 1 月 18 日，在国贸大酒店。", "公司年会是哪一天？"),
        ("明年春天想去日本看樱花，预算两万块。", "去日本看樱花准备花多少钱？"),
        ("家里的路由器是小米 AX6000，放在书房。", "家里用的是什么型号的路由器？"),
        ("我习惯用 Obsidian 记笔记，不用 Notion。", "我平时用什么软件记笔记？", "Which app do I take notes in?"),
        ("我岳父叫李建国，退休前是中学老师。", "我岳父叫什么名字？"),
        ("我每天早上六点半起床跑五公里。", "我每天早上跑多少公里？"),
        ("信用卡账单日是每月 5 号，还款日是 25 号。", "信用卡每个月几号还款？"),
        ("车险是在平安买的，每年 9 月续保。", "我的车险是在哪家保险公司买的？"),
        ("组里的周会改到了每周一下午两点。", "组里的周会现在什么时候开？"),
        ("我的笔记本电脑是公司配的 ThinkPad X1 Carbon。", "我工作用的是什么笔记本电脑？"),
        ("儿子喜欢恐龙，生日礼物打算买乐高侏罗纪系列。", "儿子的生日礼物打算买什么？"),
        ("邻居老周会帮我们代收快递，他家是 1502。", "谁帮我们收快递？"),
    ),
    "ja": (
        (
            "同僚の佐藤さんはエビアレルギーなので、打ち上げのお店選びは要注意。",
            "佐藤さんって何のアレルギーだっけ？",
            "What is Sato allergic to?",
        ),
        ("妹の名前は美咲で、来年の春に結婚する予定。", "妹の名前は何？"),
        (
            "新しい在庫管理システムは Django で作ることに決めた。",
            "在庫管理システムは何のフレームワークで作る？",
            "Which framework did we choose for the new inventory system?",
        ),
        ("ゴールデンウィークは家族で石垣島に行く。", "ゴールデンウィークの旅行先はどこ？"),
        ("夫の車はシルバーのトヨタ・プリウス。", "夫が乗ってる車の車種は？"),
        (
            "駐車場代は月 18,000 円で、毎月末に引き落とされる。",
            "駐車場に毎月いくら払ってる？",
            "How much do I pay for parking each month?",
        ),
        ("祖母は金沢の兼六園の近くで一人暮らしをしている。", "おばあちゃんはどこに住んでる？"),
        ("確定申告の書類は 3 月 10 日までに税理士の山本さんに渡すこと。", "確定申告の書類はいつまでに渡せばいい？"),
        ("映画は字幕派で、吹き替えはあまり好きじゃない。", "映画は吹き替えと字幕、どっちで観るのが好き？"),
        ("うちの柴犬の名前はコタロウ。", "うちの犬、名前なんだっけ？", "What's my dog's name?"),
        ("かかりつけの皮膚科は駅前の森クリニック。", "いつも行ってる皮膚科はどこ？"),
        ("甥の翔太の誕生日は 7 月 21 日。", "翔太の誕生日っていつ？"),
        ("ヨガ教室は毎週土曜の朝 9 時から。", "ヨガは何曜日の何時から？"),
        ("靴のサイズは 24.5 センチ。", "私の靴のサイズはいくつ？"),
        ("眼科の定期検診は 6 月 10 日の午後 2 時に予約してある。", "目の検診の予約はいつ？"),
        (
            "チームのタスク管理は Jira をやめて Linear に移行した。",
            "チームは今何でタスク管理してる？",
            "What does the team use for task tracking now?",
        ),
        ("冷蔵庫は 2022 年に買った日立のもので、保証は 5 年。", "うちの冷蔵庫はどこのメーカー？"),
        ("いとこの健太はシンガポールの銀行で働いている。", "健太の勤め先はどこ？"),
        ("新聞は日経の電子版を読んでいる。", "どの新聞を読んでるんだっけ？"),
        ("大阪出張の新幹線はのぞみ 215 号、東京駅 10 時 33 分発。", "大阪出張で乗る新幹線は何号？"),
        ("書道教室の先生は中村先生で、月謝は 8,000 円。", "書道教室の月謝はいくら？"),
        ("携帯は楽天モバイルで、毎月 3,000 円くらい。", "携帯のキャリアはどこ？"),
        ("一番好きなラーメン屋は高円寺の「麺屋はやし」で、いつも味噌を頼む。", "お気に入りのラーメン屋ってどこ？"),
        ("父は糖尿病で、毎晩インスリンを打っている。", "父の持病は何？"),
        ("社内ブログは Hugo で作って、Netlify で公開している。", "社内ブログは何で作ってる？"),
        ("運転免許の更新期限は 2027 年の誕生日まで。", "免許の更新はいつまで？"),
        ("自転車は電動アシストで、マンションの駐輪場の番号は 48。", "駐輪場の番号は何番？"),
        ("辛いものが苦手なので、カレーはいつも甘口にしている。", "カレーの辛さはどれにしてる？"),
        ("隣の家の結衣ちゃんはバレエを習っていて、発表会は 12 月 20 日。", "結衣ちゃんのバレエの発表会はいつ？"),
        ("部署の送別会は 3 月 28 日、新宿の居酒屋で。", "送別会の会場はどこ？"),
        ("同期の結婚式のご祝儀は 3 万円包むことにした。", "同期の結婚式にはいくら包む？"),
        ("家のプリンターはキヤノンの PIXUS で、インクは BCI-381。", "プリンターのインクの型番は？"),
        (
            "パスワード管理には 1Password を使っている。",
            "パスワード管理アプリは何を使ってる？",
            "Which password manager do I use?",
        ),
        ("義母の名前は恵子さんで、茶道の先生をしている。", "義母の名前は？"),
        ("毎晩寝る前に 20 分ストレッチをしている。", "寝る前のストレッチは何分？"),
        ("奨学金は毎月 27 日に 15,000 円ずつ返している。", "奨学金、月にいくら返してる？"),
        ("火災保険は東京海上で、更新は毎年 4 月。", "火災保険の更新は何月？"),
        ("朝会は 9 時 45 分から 15 分間、Google Meet でやっている。", "朝会は何のツールでやってる？"),
        ("仕事用のキーボードは HHKB の静音モデル。", "仕事で使ってるキーボードは？"),
        ("来月の結婚記念日はフレンチの「ル・シエル」を予約した。", "結婚記念日はどこのお店を予約した？"),
    ),
    "es": (
        (
            "Mi compañero Javier es alérgico a los frutos secos; ojo con las galletas en la oficina.",
            "¿A qué tiene alergia Javier?",
            "What is Javier allergic to?",
        ),
        (
            "Mi sobrina se llama Valentina y cumple nueve años en mayo.",
            "¿Cómo se llama mi sobrina?",
            "What's my niece called?",
        ),
        (
            "Para el proyecto Atlas hemos elegido Kubernetes en Google Cloud, nada de servidores propios.",
            "¿Dónde vamos a desplegar Atlas?",
        ),
        (
            "En Semana Santa nos vamos a Granada a ver la Alhambra con la familia de Lucía.",
            "¿Adónde nos vamos en Semana Santa?",
        ),
        ("Mi moto es una Vespa Primavera azul de 2019.", "¿Qué moto tengo?"),
        (
            "El alquiler del local de la academia es de 1.350 euros al mes, IVA aparte.",
            "¿Cuánto pagamos por el local de la academia?",
        ),
        (
            "La oficina nueva está en la calle Alcalá 214, tercera planta.",
            "¿Cuál es la dirección de la oficina nueva?",
            "What's the address of the new office?",
        ),
        (
            "Hay que entregar la memoria del proyecto europeo antes del 30 de septiembre.",
            "¿Hasta cuándo tenemos para entregar la memoria del proyecto europeo?",
        ),
        ("Prefiero las reuniones por la tarde, nunca antes de las diez.", "¿A qué hora prefiero tener las reuniones?"),
        ("El loro de mi abuela se llama Paco y habla más que nadie.", "¿Cómo se llama el loro de la abuela?"),
        ("Mi fisio es Marta Gil, de la clínica de la calle Serrano.", "¿Quién es mi fisioterapeuta?"),
        ("El cumpleaños de mi cuñado Andrés es el 12 de agosto.", "¿Cuándo cumple años Andrés?"),
        ("Los martes y los jueves juego al pádel a las ocho con Raúl.", "¿Qué días tengo pádel?"),
        (
            "Uso lentillas mensuales con -2,75 de graduación en los dos ojos.",
            "¿Cuánta graduación tienen mis lentillas?",
        ),
        ("Mi jefa se llama Carmen Ortega y es de Sevilla.", "¿Cómo se llama mi jefa?", "What's my boss's name?"),
        (
            "El equipo ha decidido gestionar toda la infraestructura con Terraform.",
            "¿Con qué herramienta gestionamos la infraestructura?",
        ),
        (
            "El portátil de Lucía tiene garantía hasta marzo de 2027.",
            "¿Hasta cuándo está en garantía el portátil de Lucía?",
        ),
        ("Mi primo Diego trabaja de enfermero en el Hospital La Paz.", "¿Dónde trabaja mi primo Diego?"),
        ("Siempre vuelo con Iberia porque tengo la tarjeta Iberia Plus Oro.", "¿Con qué aerolínea suelo volar?"),
        (
            "El vuelo a Buenos Aires sale el 3 de enero a las 23:55 desde la T4.",
            "¿Cuándo sale el vuelo a Buenos Aires?",
            "When does the flight to Buenos Aires leave?",
        ),
        ("Mi profesor de guitarra es Álvaro y cobra 25 euros la clase.", "¿Cuánto me cobra el profe de guitarra?"),
        (
            "La luz la tenemos con Iberdrola, con tarifa de discriminación horaria.",
            "¿Qué compañía de electricidad tenemos?",
        ),
        (
            "Las tartas de cumpleaños de la oficina las encargamos en la pastelería Mallorca.",
            "¿Dónde pedimos las tartas para los cumpleaños de la oficina?",
        ),
        ("A mi padre lo operan de la rodilla el 14 de enero en el Gregorio Marañón.", "¿Cuándo operan a mi padre?"),
        (
            "La web de la academia está hecha con WordPress y alojada en Raiola.",
            "¿Con qué está hecha la web de la academia?",
        ),
        ("El DNI me caduca en junio de 2027, hay que pedir cita para renovarlo.", "¿Cuándo me caduca el DNI?"),
        (
            "El fontanero de confianza es Manolo; su número está pegado en la nevera.",
            "¿A qué fontanero llamo si hay una avería?",
        ),
        (
            "No como pescado crudo, así que en los japoneses pido maki de verduras.",
            "¿Qué pido cuando vamos a un japonés?",
        ),
        ("La junta de vecinos es el 22 de enero a las siete de la tarde.", "¿Cuándo es la reunión de la comunidad?"),
        ("El congreso de pediatría de Lucía es en Bilbao, del 5 al 7 de marzo.", "¿Dónde es el congreso de Lucía?"),
        (
            "Para el Camino de Santiago de este verano tenemos un presupuesto de 800 euros por cabeza.",
            "¿Cuánto presupuesto tenemos para hacer el Camino?",
        ),
        (
            "La caldera es una Junkers de gas y la revisión toca en octubre.",
            "¿Cuándo hay que hacerle la revisión a la caldera?",
        ),
        ("Las facturas las hago con Holded desde enero.", "¿Con qué programa hago las facturas?"),
        (
            "Mi mejor amiga es Nuria; nos conocimos en la facultad, en Salamanca.",
            "¿Dónde conocí a Nuria?",
            "Where did I meet Nuria?",
        ),
        ("Los sábados salgo en bici unos 60 km por la sierra.", "¿Cuántos kilómetros hago en bici los sábados?"),
        ("La cuota del gimnasio es de 39 euros y se cobra el día 1.", "¿Cuánto pago de gimnasio al mes?"),
        ("El seguro médico es de Sanitas, con póliza familiar.", "¿Qué seguro médico tenemos?"),
        ("Los despliegues a producción solo se hacen martes y jueves.", "¿Qué días se puede desplegar a producción?"),
        ("Mi silla de oficina es una Herman Miller Aeron de segunda mano.", "¿Qué silla de oficina tengo?"),
        ("Mi hermano Pablo se casa el 6 de junio en Toledo.", "¿Cuándo es la boda de Pablo?"),
    ),
    "de": (
        (
            "Meine Kollegin Sabine verträgt keine Milchprodukte, beim Teamessen darauf achten.",
            "Was verträgt Sabine nicht?",
            "What can't Sabine eat?",
        ),
        ("Mein Patenkind heißt Emil und wohnt in Freiburg.", "Wie heißt mein Patenkind?", "What's my godchild called?"),
        (
            "Für das Projekt Nordlicht haben wir uns für Kotlin statt Java entschieden.",
            "In welcher Sprache entwickeln wir Nordlicht?",
            "Which programming language did we pick for Nordlicht?",
        ),
        ("Im August fahren wir mit dem Wohnmobil an den Gardasee.", "Wohin geht die Reise im August?"),
        ("Onkel Heinz fährt seit zwanzig Jahren einen beigen Mercedes W124.", "Was für ein Auto fährt Onkel Heinz?"),
        (
            "Den Proberaum der Band teilen wir uns, jeder zahlt 45 Euro im Monat.",
            "Wie viel zahlt jeder für den Proberaum?",
        ),
        (
            "Die Praxis von Dr. Hoffmann ist in der Schillerstraße 12, zweiter Stock.",
            "Wo ist die Praxis von Dr. Hoffmann?",
        ),
        (
            "Lena muss ihre Bachelorarbeit bis zum 15. Februar abgeben.",
            "Bis wann muss Lena die Bachelorarbeit einreichen?",
        ),
        ("Ich schlafe nur bei offenem Fenster, auch im Winter.", "Wie schlafe ich am liebsten, Fenster auf oder zu?"),
        (
            "Unser Kaninchen heißt Krümel und bekommt abends frischen Löwenzahn.",
            "Wie heißt unser Hase?",
            "What's our rabbit called?",
        ),
        ("Mein Hausarzt ist Dr. Brandt, Sprechstunde nur vormittags.", "Wie heißt mein Hausarzt?"),
        ("Omas 90. Geburtstag ist am 2. April.", "Wann hat Oma Geburtstag?"),
        ("Chorprobe ist immer mittwochs um halb acht im Gemeindehaus.", "Wann ist Chor?"),
        ("Bei Hosen trage ich 32/32, bei Hemden M.", "Welche Hosengröße habe ich?"),
        ("Die Handballmannschaft trainiert Uwe Schröder.", "Wer ist der Trainer der Handballmannschaft?"),
        (
            "Bei Nordlicht laufen die Tests jetzt in GitHub Actions statt in Jenkins.",
            "Womit laufen die Tests bei Nordlicht?",
        ),
        (
            "Die Waschmaschine ist eine Miele, Garantie bis Oktober 2028.",
            "Wie lange hat die Waschmaschine noch Garantie?",
        ),
        ("Mein Schwager Tobias arbeitet bei Siemens in Erlangen.", "Wo arbeitet Tobias?"),
        ("Zur Arbeit fahre ich mit der S-Bahn, Monatskarte Zone AB.", "Wie komme ich zur Arbeit?"),
        ("Nach Hamburg nehme ich den ICE 1008 um 7:12, Wagen 9.", "Welchen Zug nehme ich nach Hamburg?"),
        ("Die Mathe-Nachhilfe bei Herrn Vogel kostet 30 Euro die Stunde.", "Was kostet die Nachhilfe in Mathe?"),
        (
            "Mein Girokonto ist bei der DKB, die Kreditkarte auch.",
            "Bei welcher Bank habe ich mein Girokonto?",
            "Which bank is my current account with?",
        ),
        ("Mein Lieblingsbiergarten ist der am Chinesischen Turm.", "In welchen Biergarten gehe ich am liebsten?"),
        (
            "Meine Schwägerin Jana ist im vierten Monat schwanger, errechneter Termin Mitte Mai.",
            "Wann ist Janas Geburtstermin?",
        ),
        ("Die Projektdokumentation schreiben wir in Confluence.", "Wo dokumentieren wir unsere Projekte?"),
        ("Meine BahnCard 50 läuft am 30. Juni ab.", "Wann läuft die BahnCard ab?"),
        ("Der Schornsteinfeger kommt immer im November.", "Wann kommt der Schornsteinfeger?"),
        ("Im Büro sitze ich am liebsten am Fenster mit Blick auf den Hof.", "Wo sitze ich im Büro am liebsten?"),
        ("Das Klassentreffen zum 20. Abi-Jubiläum ist am 17. Mai in Kassel.", "Wo findet das Klassentreffen statt?"),
        ("Der Umzug in die neue Wohnung ist für den 1. März geplant.", "Wann ziehen wir um?"),
        (
            "Für den Skiurlaub in Ischgl haben wir 2.400 Euro eingeplant.",
            "Wie viel Budget haben wir für den Skiurlaub?",
        ),
        ("Auf dem Balkon wachsen Tomaten und Basilikum, gegossen wird morgens.", "Was wächst auf dem Balkon?"),
        ("Für die Zeiterfassung nutzen wir Clockify.", "Womit erfassen wir unsere Arbeitszeiten?"),
        (
            "Herr Becker von nebenan hat einen Zweitschlüssel für unsere Wohnung.",
            "Wer hat einen Ersatzschlüssel für die Wohnung?",
        ),
        ("Zweimal die Woche gehe ich bouldern, meistens in der Boulderwelt Ost.", "Wo gehe ich bouldern?"),
        (
            "Der Rundfunkbeitrag wird vierteljährlich abgebucht, 55,08 Euro.",
            "Wie oft wird der Rundfunkbeitrag abgebucht?",
        ),
        ("Meine Haftpflichtversicherung ist bei der HUK-Coburg.", "Wo bin ich haftpflichtversichert?"),
        ("Das Sprint-Review ist jeden zweiten Freitag um 14 Uhr.", "Wann ist das Sprint-Review?"),
        ("Als Editor nutze ich Neovim mit LazyVim.", "Welchen Editor benutze ich?", "Which editor do I use?"),
        ("Paul wünscht sich zu Weihnachten ein Fahrrad mit Gangschaltung.", "Was wünscht sich Paul zu Weihnachten?"),
    ),
    "fr": (
        (
            "Mon collègue Thomas est allergique aux fruits de mer.",
            "Thomas est allergique à quoi, déjà ?",
            "What is Thomas allergic to?",
        ),
        (
            "Le fils de Claire s'appelle Hugo, il entre au CP en septembre.",
            "Comment s'appelle le fils de Claire ?",
            "What's Claire's son called?",
        ),
        (
            "Pour l'appli Mistral, on a choisi Flutter plutôt que React Native.",
            "On développe l'appli Mistral avec quel framework ?",
        ),
        ("Pour la Toussaint, on va chez les parents de Julien à Annecy.", "On va où pour la Toussaint ?"),
        ("Julien roule en Peugeot 308 grise.", "Quelle voiture a Julien ?"),
        ("La cotisation au club de tennis est de 320 euros par an.", "Combien coûte l'adhésion au club de tennis ?"),
        (
            "Le cabinet de l'ostéopathe est au 14 rue des Lilas, à Montreuil.",
            "Quelle est l'adresse de l'ostéo ?",
            "What's the osteopath's address?",
        ),
        (
            "Le dossier de subvention doit être déposé avant le 31 janvier.",
            "Quelle est la date limite pour la demande de subvention ?",
        ),
        (
            "Pour les trajets de moins de cinq heures, je préfère le train à l'avion.",
            "Train ou avion : qu'est-ce que je préfère pour les trajets courts ?",
        ),
        ("Le poisson rouge de Julien s'appelle Bulle.", "Comment s'appelle le poisson de Julien ?"),
        ("Mon ophtalmo, c'est le docteur Lefèvre, à la clinique du Parc.", "C'est qui, mon ophtalmologue ?"),
        ("L'anniversaire de ma marraine, c'est le 24 juillet.", "C'est quand, l'anniversaire de ma marraine ?"),
        ("J'ai théâtre le lundi soir à 20 h.", "Quel soir j'ai cours de théâtre ?"),
        ("Ma taille de bague, c'est 54.", "Je fais quelle taille de bague ?"),
        ("La directrice de l'école de musique s'appelle Sophie Marchand.", "Qui dirige l'école de musique ?"),
        (
            "On fait toutes les maquettes dans Figma maintenant, plus dans Sketch.",
            "Avec quel outil on fait les maquettes ?",
        ),
        (
            "Le lave-vaisselle Bosch est garanti jusqu'en mai 2027.",
            "Jusqu'à quand le lave-vaisselle est-il sous garantie ?",
        ),
        ("Ma cousine Élodie travaille chez Airbus, à Toulouse.", "Où travaille Élodie ?", "Where does Élodie work?"),
        ("J'écoute les podcasts en vitesse 1,5.", "À quelle vitesse j'écoute mes podcasts ?"),
        (
            "Le TGV pour Marseille part de la gare de Lyon à 8 h 07, voiture 14.",
            "À quelle heure part le TGV pour Marseille ?",
        ),
        ("La nounou, Fatou, est payée 11 euros de l'heure.", "Combien on paie Fatou de l'heure ?"),
        (
            "On fait les courses en ligne chez Carrefour, livraison le samedi matin.",
            "Où est-ce qu'on commande les courses en ligne ?",
        ),
        ("Le vin préféré de Julien, c'est un saint-émilion.", "Quel vin Julien préfère-t-il ?"),
        (
            "Mon grand-père porte un pacemaker depuis 2021.",
            "Depuis quand mon grand-père a-t-il un stimulateur cardiaque ?",
            "Since when has my grandfather had a pacemaker?",
        ),
        ("La boutique en ligne tourne sur Shopify.", "Sur quelle plateforme est la boutique en ligne ?"),
        (
            "Le contrôle technique de la Peugeot de Julien est à faire avant le 12 avril.",
            "Avant quelle date faut-il passer le contrôle technique de la Peugeot ?",
        ),
        (
            "Le syndic de l'immeuble, c'est Foncia ; notre contact est Mme Bernard.",
            "Qui est notre contact chez le syndic ?",
        ),
        (
            "Au restaurant, je prends toujours de l'eau gazeuse, jamais de la plate.",
            "Quelle eau je commande au resto ?",
        ),
        ("Le vide-grenier du quartier a lieu le 25 mai.", "C'est quand, le vide-grenier ?"),
        ("Le séminaire d'équipe aura lieu à Biarritz du 10 au 12 juin.", "Où se tient le séminaire d'équipe ?"),
        (
            "Pour les travaux de la salle de bain, on a un budget de 6 500 euros.",
            "Quel budget on a pour refaire la salle de bain ?",
        ),
        ("La domotique tourne sur Home Assistant, installé sur un Raspberry Pi.", "Sur quoi tourne la domotique ?"),
        ("Les sauvegardes du NAS partent chaque nuit vers Backblaze.", "Où sont envoyées les sauvegardes du NAS ?"),
        ("Le témoin de mariage de Julien, c'est Karim.", "Qui est le témoin de Julien ?"),
        ("Je médite 30 minutes chaque matin avec Petit Bambou.", "Combien de temps je médite le matin ?"),
        ("La taxe foncière, 1 280 euros, est prélevée en octobre.", "Combien on paie de taxe foncière ?"),
        ("Le compte de l'association est au Crédit Coopératif.", "Dans quelle banque est le compte de l'association ?"),
        (
            "Le point hebdo avec le client, c'est le jeudi à 11 h.",
            "Quand a lieu le point hebdomadaire avec le client ?",
        ),
        ("Mon appareil photo est un Fujifilm X-T4.", "Quel appareil photo j'ai ?", "What camera do I have?"),
        ("Pour ses 40 ans, Karim veut faire la fête sur une péniche.", "Où Karim veut-il fêter ses 40 ans ?"),
    ),
    "ru": (
        ("У Олега аллергия на кошачью шерсть.", "На что у Олега аллергия?", "What is Oleg allergic to?"),
        ("Внука Нины Ивановны зовут Артём.", "Как зовут внука Нины Ивановны?"),
        (
            "Для аналитики в проекте «Сокол» выбрали ClickHouse.",
            "Какую базу взяли под аналитику в «Соколе»?",
            "Which database did we choose for analytics in Sokol?",
        ),
        ("На Новый год летим в Казань к родителям Лены.", "Куда мы летим на Новый год?"),
        ("Игорь ездит на вишнёвой Kia Rio.", "Какая машина у Игоря?"),
        ("Аренда дачи на лето обходится в 120 тысяч рублей за сезон.", "Сколько стоит снять дачу на лето?"),
        ("Веломастерская, где мне чинят велосипед, находится на Садовой, 17.", "Где находится веломастерская?"),
        (
            "Презентацию для инвесторов нужно отправить до 20 декабря.",
            "До какого числа надо отправить презентацию инвесторам?",
        ),
        ("Лучше всего мне работается под музыку без слов, обычно лоу-фай.", "Под какую музыку мне лучше работается?"),
        ("Нашу морскую свинку зовут Пуговка.", "Как зовут морскую свинку?", "What's the guinea pig called?"),
        ("Кардиолог у бабушки Веры — Ирина Сергеевна из клиники «Медси».", "Кто кардиолог у бабушки Веры?"),
        ("Лена родилась 28 февраля.", "Когда у Лены день рождения?"),
        ("По субботам в десять у меня английский с репетитором.", "Когда у меня занятия английским?"),
        ("Рост у меня 182 см, вес 78 кг.", "Какой у меня рост?"),
        ("Мой научный руководитель — профессор Ковалёв.", "Кто мой научрук?"),
        (
            "Мониторинг у нас теперь на Grafana и Prometheus вместо Zabbix.",
            "Чем мы сейчас мониторим сервисы?",
            "What do we use for monitoring now?",
        ),
        ("Гарантия на кофемашину De'Longhi заканчивается в июле.", "Когда кончается гарантия на кофемашину?"),
        ("Брат Лены, Максим, работает в Яндексе.", "Где работает Максим?"),
        ("Я не ем после восьми вечера.", "После какого часа я не ем?"),
        (
            "«Сапсан» до Петербурга отправляется в 13:30 с Ленинградского вокзала.",
            "Во сколько отправляется «Сапсан»?",
            "What time does the Sapsan leave?",
        ),
        ("Тренер по теннису берёт 2500 рублей за час.", "Сколько стоит час с тренером по теннису?"),
        ("Коммуналку я оплачиваю через Госуслуги.", "Как я плачу за коммунальные услуги?"),
        ("В «Вареничной» Лена всегда берёт вареники с вишней.", "Что Лена заказывает в «Вареничной»?"),
        ("Бабушка Вера плохо слышит, звонить ей лучше днём и говорить погромче.", "Как лучше звонить бабушке Вере?"),
        ("Лендинг мы собрали на Tilda.", "На чём сделан лендинг?"),
        ("Справка для бассейна действует до 1 сентября.", "До какого числа действует справка в бассейн?"),
        ("Ключи от дачи лежат у соседки Светланы.", "У кого ключи от дачи?"),
        ("Чай я пью только зелёный и без сахара.", "Какой чай я пью?"),
        ("У Артёма выпускной 25 июня.", "Когда у Артёма выпускной?"),
        ("Конференция HighLoad в этот раз пройдёт 14–15 апреля в Москве.", "Когда будет HighLoad?"),
        ("На ремонт кухни отложили 400 тысяч.", "Какой у нас бюджет на кухню?"),
        ("На даче питьевую воду берём из родника, а колодец — для полива.", "Откуда мы берём питьевую воду на даче?"),
        ("С клиентами переписываемся в Telegram, не в WhatsApp.", "В каком мессенджере мы общаемся с клиентами?"),
        ("Свидетелем на свадьбе у Игоря был Денис.", "Кто был свидетелем у Игоря?"),
        ("Каждый день прохожу десять тысяч шагов.", "Сколько шагов я прохожу за день?"),
        ("Абонемент в бассейн стоит 3500 рублей в месяц.", "Сколько стоит абонемент в бассейн?"),
        ("Страховку для поездки в Турцию оформили в «Ингосстрахе».", "В какой компании страховка на Турцию?"),
        ("Ретро по спринту проводим в последний четверг месяца.", "Когда у нас ретро?"),
        ("Телефон у меня Google Pixel 8.", "Какой у меня телефон?", "What phone do I have?"),
        ("На свадьбу Максиму подарим робот-пылесос.", "Что дарим Максиму на свадьбу?"),
    ),
    "ar": (
        ("زميلي خالد لديه حساسية من البيض.", "من أي شيء يتحسس خالد؟", "What is Khaled allergic to?"),
        ("ابن عمي يوسف سمّى مولوده الجديد آدم.", "ما اسم مولود يوسف الجديد؟", "What did Youssef name his new baby?"),
        (
            "قررنا استخدام Redis للتخزين المؤقت في مشروع واحة.",
            "ما الذي اخترناه للكاش في مشروع واحة؟",
            "What do we use for caching in the Waha project?",
        ),
        ("في إجازة عيد الفطر سنزور أهل زوجتي في الإسكندرية.", "أين سنقضي إجازة عيد الفطر؟"),
        ("سيارة أخي سامي هيونداي توسان بيضاء.", "ما نوع سيارة سامي؟"),
        ("إيجار المكتب في دبي 85 ألف درهم في السنة.", "كم ندفع إيجارًا لمكتب دبي؟"),
        (
            "عيادة الدكتورة هدى في شارع التحلية، مبنى 12، في جدة.",
            "ما عنوان عيادة الدكتورة هدى؟",
            "What's the address of Dr. Huda's clinic?",
        ),
        ("آخر موعد لتسليم تصميم الشعار للعميل هو 10 يناير.", "متى يجب أن نسلّم الشعار للعميل؟"),
        ("في الطائرة أفضّل المقعد بجانب الممر.", "أي مقعد أحب في الطائرة؟"),
        ("طائر الكناري عندنا اسمه شمس.", "ما اسم الكناري؟"),
        ("أخصائية التغذية التي أتابع معها هي الدكتورة ريم.", "مع من أتابع نظامي الغذائي؟"),
        ("عيد ميلاد أمي في 15 مارس.", "متى عيد ميلاد والدتي؟"),
        ("تمرين كرة القدم مع الفريق كل ثلاثاء الساعة التاسعة مساءً.", "متى تمرين الكرة؟"),
        ("مقاس قميصي L ومقاس الياقة 41.", "ما مقاس قمصاني؟"),
        ("رئيس مجلس الإدارة الجديد هو الأستاذ فهد العتيبي.", "من الذي صار رئيسًا لمجلس الإدارة؟"),
        (
            "نستخدم Sentry لتتبع الأخطاء في التطبيق.",
            "بأي أداة نتابع أخطاء التطبيق؟",
            "What do we use to track app errors?",
        ),
        ("ضمان المكيّف ينتهي في أغسطس 2028.", "متى ينتهي ضمان المكيف؟"),
        ("صديقي طارق يعمل مهندسًا في أرامكو بالظهران.", "أين يعمل طارق؟"),
        ("لا أشرب القهوة بعد العصر حتى أنام جيدًا.", "متى أتوقف عن شرب القهوة؟"),
        (
            "رحلتي إلى القاهرة يوم الخميس على الخطوط السعودية، رقم الرحلة SV305.",
            "ما رقم رحلة القاهرة؟",
            "What's the flight number to Cairo?",
        ),
        ("الأستاذ منير يأخذ 200 ريال على درس العود.", "كم سعر درس العود؟"),
        ("نحجز الفنادق دائمًا عن طريق Booking.", "من أي موقع نحجز الفنادق عادةً؟"),
        ("أفضل شاورما في الحي عند مطعم أبو علي قرب المسجد.", "من أين أشتري الشاورما؟"),
        ("خالتي منى مصابة بالربو وتحمل البخاخ معها دائمًا.", "ما المرض الذي تعاني منه خالتي منى؟"),
        ("تطبيق الحجوزات مبني على Next.js ومستضاف على Vercel.", "بأي تقنية بُني تطبيق الحجوزات؟"),
        ("تأشيرة الشنغن التي حصلت عليها صالحة حتى 30 يونيو.", "حتى متى تصلح تأشيرة الشنغن؟"),
        ("حارس العمارة اسمه أبو محمود، ويسكن في الدور الأرضي.", "ما اسم حارس العمارة؟"),
        ("في رمضان أفطر على التمر واللبن قبل الصلاة.", "على ماذا أفطر في رمضان؟"),
        ("حفل تخرج ابنة خالتي نورة في 18 يونيو.", "متى حفل تخرج نورة؟"),
        ("معرض الرياض الدولي للكتاب من 1 إلى 10 أكتوبر.", "متى معرض الكتاب في الرياض؟"),
        ("ميزانية العمرة هذه السنة 12 ألف ريال للعائلة كلها.", "كم خصصنا للعمرة هذا العام؟"),
        ("الألواح الشمسية على السطح تكفي لتشغيل المكيفات في النهار.", "ماذا تشغّل الألواح الشمسية؟"),
        ("نستخدم Zoho لإدارة الرواتب.", "ما النظام الذي نصرف به الرواتب؟"),
        ("خطيب نورة اسمه فيصل.", "ما اسم خطيب نورة؟"),
        ("أقرأ جزءًا من القرآن كل يوم بعد صلاة الفجر.", "ماذا أقرأ بعد الفجر؟"),
        ("قسط السيارة 1900 ريال، يُخصم من الراتب يوم 27 من كل شهر.", "كم قسط السيارة الشهري؟"),
        ("أقرب صيدلية مناوبة هي صيدلية النهدي على طريق الملك فهد.", "أين أقرب صيدلية مناوبة؟"),
        ("اجتماع الإدارة الشهري في أول أحد من كل شهر.", "متى اجتماع الإدارة الشهري؟"),
        ("أستخدم جهاز iPad Air في الاجتماعات والرسم.", "ما الجهاز اللوحي الذي أستخدمه؟"),
        ("نخطط لحفلة مفاجئة لأبي في عيد ميلاده الستين في مطعم نجد.", "أين ستكون الحفلة المفاجئة لأبي؟"),
    ),
}

# English facts: (fact, English question, language of the other question, the other question); six per language.
ENGLISH: tuple[tuple[str, str, str, str], ...] = (
    ("My colleague Priya is allergic to kiwi.", "What is Priya allergic to?", "zh", "Priya 对什么过敏？"),
    ("Mark's twins are called Ella and Noah.", "What are Mark's twins called?", "zh", "Mark 家的双胞胎叫什么名字？"),
    (
        "We settled on Svelte for the Harbor dashboard.",
        "What's the Harbor dashboard built with?",
        "zh",
        "Harbor 的仪表盘是用什么框架写的？",
    ),
    (
        "Over Thanksgiving we're driving up to Vermont to see Aunt Linda.",
        "Where are we going for Thanksgiving?",
        "zh",
        "感恩节我们去哪儿？",
    ),
    ("Emma drives a red Mini Cooper convertible.", "What does Emma drive?", "zh", "Emma 开的是什么车？"),
    (
        "The storage unit on Elm Street costs $145 a month.",
        "How much is the storage unit each month?",
        "zh",
        "储物间一个月多少钱？",
    ),
    (
        "The coworking space is at 41 Canal Street, unit 4B.",
        "What's the coworking space's address?",
        "ja",
        "コワーキングスペースの住所は？",
    ),
    (
        "The food bank's annual report for the board is due February 28.",
        "When is the food bank report due?",
        "ja",
        "フードバンクの年次報告書の締め切りはいつ？",
    ),
    (
        "I listen to audiobooks through Libby with my library card.",
        "Which app do I use for audiobooks?",
        "ja",
        "オーディオブックは何のアプリで聴いてる？",
    ),
    ("Our hamster is named Waffles.", "What's the hamster called?", "ja", "ハムスターの名前は？"),
    (
        "My therapist is Dr. Greene; I see her every other Wednesday.",
        "How often do I see Dr. Greene?",
        "ja",
        "グリーン先生のところにはどのくらいの頻度で通ってる？",
    ),
    (
        "Grandpa Joe turns 85 on October 9.",
        "When is Grandpa Joe's birthday?",
        "ja",
        "ジョーおじいちゃんの誕生日はいつ？",
    ),
    (
        "Book club meets the first Thursday of every month at Rachel's place.",
        "When does book club meet?",
        "es",
        "¿Cuándo se reúne el club de lectura?",
    ),
    ("My bike has a 56 cm frame.", "What frame size is my bike?", "es", "¿De qué talla es el cuadro de mi bici?"),
    (
        "Diane Walsh from finance is the project sponsor for Harbor.",
        "Who is sponsoring Harbor?",
        "es",
        "¿Quién es la patrocinadora del proyecto Harbor?",
    ),
    (
        "We manage feature flags in LaunchDarkly.",
        "What do we use for feature flags?",
        "es",
        "¿Con qué gestionamos los feature flags?",
    ),
    (
        "The e-bike battery is under warranty until June 2027.",
        "When does the e-bike battery's warranty run out?",
        "es",
        "¿Hasta cuándo tiene garantía la batería de la bici eléctrica?",
    ),
    ("My roommate Sam works night shifts at St. Mary's Hospital.", "Where does Sam work?", "es", "¿Dónde trabaja Sam?"),
    (
        "I never take calls on Friday afternoons.",
        "When do I refuse to take calls?",
        "de",
        "Wann nehme ich keine Anrufe an?",
    ),
    (
        "The ferry to Nantucket leaves Hyannis at 9:15 on Saturday.",
        "What time does the Nantucket ferry leave?",
        "de",
        "Wann legt die Fähre nach Nantucket ab?",
    ),
    (
        "The piano tuner charges $120 a visit.",
        "How much does the piano tuner charge?",
        "de",
        "Was nimmt der Klavierstimmer pro Besuch?",
    ),
    (
        "Trash goes out Tuesday mornings; recycling every other week.",
        "Which day is trash pickup?",
        "de",
        "An welchem Tag wird der Müll abgeholt?",
    ),
    (
        "Our go-to pizza place is Tony's on 5th; we always get the white pie.",
        "Where do we usually order pizza?",
        "de",
        "Bei welcher Pizzeria bestellen wir normalerweise?",
    ),
    (
        "Kate has celiac disease, so no gluten at family dinners.",
        "What condition does Kate have?",
        "de",
        "Welche Krankheit hat Kate?",
    ),
    (
        "The newsletter goes out through Mailchimp every Tuesday.",
        "What do we send the newsletter with?",
        "fr",
        "On envoie la newsletter avec quel outil ?",
    ),
    (
        "My green card has to be renewed by August 2027.",
        "When do I need to renew my green card?",
        "fr",
        "Avant quand dois-je renouveler ma carte verte ?",
    ),
    (
        "The hamster's vet is Dr. Alvarez at Riverside Animal Clinic.",
        "Who is the hamster's vet?",
        "fr",
        "Qui est le vétérinaire du hamster ?",
    ),
    (
        "I can't stand olives on pizza.",
        "Which pizza topping do I hate?",
        "fr",
        "Qu'est-ce que je déteste sur les pizzas ?",
    ),
    (
        "Jess's baby shower is on April 12 at her mom's house.",
        "When is Jess's baby shower?",
        "fr",
        "C'est quand, la baby shower de Jess ?",
    ),
    ("The hackathon is in Austin, March 6 to 8.", "Where is the hackathon?", "fr", "Où se passe le hackathon ?"),
    (
        "We budgeted $4,000 for the new roof.",
        "How much did we set aside for the roof?",
        "ru",
        "Сколько мы заложили на новую крышу?",
    ),
    (
        "The smoke detectors get fresh batteries every November.",
        "When do the smoke detector batteries get changed?",
        "ru",
        "Когда мы меняем батарейки в датчиках дыма?",
    ),
    (
        "On-call rotations are handled in PagerDuty.",
        "What do we use for on-call?",
        "ru",
        "Через что у нас организованы дежурства?",
    ),
    ("My best man was Jake, my college roommate.", "Who was my best man?", "ru", "Кто был моим шафером на свадьбе?"),
    (
        "I practise Spanish on Duolingo for 15 minutes a day.",
        "How long do I practise Spanish each day?",
        "ru",
        "Сколько времени в день я занимаюсь испанским?",
    ),
    (
        "The cabin on Lake George sleeps eight.",
        "How many people can the cabin sleep?",
        "ru",
        "Сколько человек помещается в домике на озере?",
    ),
    (
        "The car rental in Lisbon is booked with Sixt.",
        "Which company is our Lisbon rental car from?",
        "ar",
        "من أي شركة استأجرنا السيارة في لشبونة؟",
    ),
    (
        "Quarterly planning happens in the second week of January.",
        "When is quarterly planning?",
        "ar",
        "متى يكون التخطيط الربعي؟",
    ),
    ("I read on a Kindle Paperwhite.", "What e-reader do I have?", "ar", "ما القارئ الإلكتروني الذي أستخدمه؟"),
    (
        "Dave's retirement party will be at the lodge at Bear Creek.",
        "Where is Dave's retirement party?",
        "ar",
        "أين ستقام حفلة تقاعد ديف؟",
    ),
    ("Lily's swim meet is on May 30 in Columbus.", "When is Lily's swim meet?", "ar", "متى مسابقة السباحة لليلي؟"),
    ("My standing desk is an Uplift V2.", "Which standing desk do I have?", "ar", "ما نوع مكتبي الذي أعمل عليه واقفًا؟"),
)

# ---------------------------------------------------------------------------------------------------------------
# Ordinary notes: templates with varied fillers. People in notes are nobody a fact is about; cities, tools,
# project names and numbers are shared with the facts. Russian names and cities carry their cases, Arabic names
# the verb forms of their gender, French names the elided "de", so every filler reads naturally.

TOOLS = (
    "PostgreSQL",
    "FastAPI",
    "Django",
    "Kubernetes",
    "Kotlin",
    "Flutter",
    "ClickHouse",
    "Redis",
    "Svelte",
    "GitHub Actions",
    "MongoDB",
    "Kafka",
    "RabbitMQ",
    "Elasticsearch",
    "Flask",
    "Rust",
    "Go",
    "TypeScript",
    "React Native",
    "Docker",
    "Ansible",
    "Jenkins",
    "Vue",
    "Spring Boot",
    "SQLite",
    "MySQL",
)

Filler = dict[str, str]


def _plain(*names: str) -> list[Filler]:
    return [{"p": name} for name in names]


def _cities(*names: str) -> list[Filler]:
    return [{"c": name} for name in names]


def _ru_person(nom: str, gen: str, dat: str, ins: str, female: bool) -> Filler:
    return {"p": nom, "p_gen": gen, "p_dat": dat, "p_ins": ins, "a": "а" if female else ""}


def _ru_city(nom: str, prep: str, acc: str, gen: str) -> Filler:
    return {"c": nom, "c_prep": prep, "c_acc": acc, "c_gen": gen}


def _ar_person(name: str, female: bool) -> Filler:
    return {"p": name, "bought": "اشترت" if female else "اشترى", "moves": "تنتقل" if female else "ينتقل"}


def _fr_person(name: str) -> Filler:
    elided = name[0].lower() in "aeiouyéèêh"
    return {"p": name, "de_p": f"d'{name}" if elided else f"de {name}"}


@dataclass(frozen=True)
class NoteLanguage:
    """What one language's notes are made of; `money` is (low, high, step) and how an amount is written."""

    templates: tuple[str, ...]
    people: list[Filler]
    cities: list[Filler]
    projects: tuple[str, ...]
    weekdays: tuple[str, ...]
    gadgets: tuple[str, ...]
    money: tuple[int, int, int]
    money_format: str = "{:d}"
    counts: tuple[int, int] = (3, 9)
    minutes: tuple[int, ...] = (15, 20, 25, 30, 35, 40, 45, 50)


NOTES: dict[str, NoteLanguage] = {
    "zh": NoteLanguage(
        templates=(
            "和{p}开了个短会，{x}的排期往后推了一周。",
            "{p}下周去{c}出差，周四回来。",
            "周末在家试了试 {t}，文档写得挺清楚。",
            "{p}推荐了 {t}，有空再看看。",
            "今天超市买菜花了 {n} 元。",
            "修了{x}里一个分页的 bug，测试全过了。",
            "{p}发来了{c}展会的照片。",
            "在咖啡馆坐了两个小时，把{x}的周报写完了。",
            "给{p}寄了张生日贺卡。",
            "{p}问{x}的演示能不能改到周{w}。",
            "坐高铁去{c}，路上看了半本书。",
            "{c}下雨，{p}的航班晚点了 {m} 分钟。",
            "看了一篇讲 {t} 性能调优的文章，记了几条笔记。",
            "帮{p}改了改简历，准备投{c}的公司。",
            "和{p}在{c}吃了顿火锅，一共 {n} 元。",
            "{x}的代码评审今天合了 {k} 个合并请求。",
            "{p}刚买了{g}。",
            "{p}的父母这周末从{c}过来。",
            "{p}下个月搬到{c}去住。",
            "订了{c}一家餐厅，{k}个人，{p}也来。",
        ),
        people=_plain("周敏", "何静", "马超", "郭鹏", "罗丹", "许婷", "谢磊", "韩雪", "唐亮", "冯佳", "邓洁", "曹阳"),
        cities=_cities("北京", "上海", "广州", "深圳", "杭州", "成都", "武汉", "西安", "南京", "大连", "重庆", "厦门"),
        projects=("Orion", "Lighthouse", "Atlas", "Harbor"),
        weekdays=("一", "二", "三", "四", "五"),
        gadgets=("一部新手机", "一台新笔记本电脑", "一辆新自行车", "一台平板电脑"),
        money=(30, 400, 1),
    ),
    "ja": NoteLanguage(
        templates=(
            "{p}さんと短い打ち合わせ。{x}のスケジュールが一週間後ろにずれた。",
            "{p}さんは来週{c}に出張、木曜に戻る予定。",
            "週末に{t}を少し触ってみた。ドキュメントは分かりやすい。",
            "{p}さんに{t}を勧められた。時間があるときに見てみる。",
            "スーパーで買い物、{n}円。",
            "{x}のページ送りのバグを直した。テストは全部通った。",
            "{p}さんから{c}の展示会の写真が届いた。",
            "カフェで二時間作業して、{x}の週報を書き終えた。",
            "{p}さんに誕生日カードを送った。",
            "{p}さんから、{x}のデモを{w}曜日に変えられないかと相談があった。",
            "{c}へ移動。車内で本を半分読んだ。",
            "{c}は雨で、{p}さんの便が{m}分遅れている。",
            "{t}のパフォーマンスチューニングの記事を読んで、メモを取った。",
            "{p}さんの履歴書を一緒に見直した。{c}の会社に応募するそうだ。",
            "{p}さんと{c}で焼き肉。会計は{n}円だった。",
            "今日は{x}のコードレビューでプルリクを{k}件マージした。",
            "{p}さんが新しい{g}を買ったらしい。",
            "{p}さんのご両親が週末に{c}から来るそうだ。",
            "{p}さんは来月{c}に引っ越す。",
            "{c}のレストランを{k}人で予約した。{p}さんも来る。",
        ),
        people=_plain("佐々木", "高橋", "伊藤", "渡辺", "加藤", "吉田", "山田", "松本", "井上", "木村", "斎藤", "清水"),
        cities=_cities(
            "大阪", "福岡", "名古屋", "札幌", "仙台", "神戸", "横浜", "広島", "那覇", "新潟", "金沢", "鹿児島"
        ),
        projects=("在庫管理システム", "Orion", "Atlas", "Harbor"),
        weekdays=("月", "火", "水", "木", "金"),
        gadgets=("スマホ", "ノートパソコン", "自転車", "タブレット"),
        money=(800, 6000, 10),
        money_format="{:,d}",
    ),
    "es": NoteLanguage(
        templates=(
            "Reunión corta con {p}: el calendario de {x} se retrasa una semana.",
            "{p} tiene un viaje de trabajo a {c} la semana que viene; vuelve el jueves.",
            "El fin de semana probé {t} en casa; la documentación es bastante clara.",
            "{p} me recomendó {t}; a ver si lo miro con calma.",
            "Compra en el súper: {n} euros.",
            "Arreglado un fallo de paginación en {x}; todos los tests en verde.",
            "{p} mandó las fotos de la feria de {c}.",
            "Dos horas en una cafetería para terminar el informe semanal de {x}.",
            "Le mandé a {p} una tarjeta de cumpleaños.",
            "{p} pregunta si la demo de {x} puede pasar al {w}.",
            "En el tren a {c}; me leí medio libro por el camino.",
            "Llueve en {c} y el vuelo de {p} lleva {m} minutos de retraso.",
            "Leí un artículo sobre cómo afinar el rendimiento de {t} y tomé algunas notas.",
            "Repasé con {p} el currículum antes de mandarlo a empresas de {c}.",
            "Cena con {p} en {c}: {n} euros en total.",
            "En la revisión de código de {x} se fusionaron hoy {k} pull requests.",
            "{p} se ha comprado un {g} nuevo.",
            "Los padres de {p} vienen de {c} este fin de semana.",
            "{p} se muda a {c} el mes que viene.",
            "Mesa reservada para {k} en un restaurante de {c}; viene también {p}.",
        ),
        people=_plain(
            "Rocío",
            "Alberto",
            "Inés",
            "Sergio",
            "Elena",
            "Jorge",
            "Pilar",
            "Ramón",
            "Beatriz",
            "Óscar",
            "Teresa",
            "Iván",
        ),
        cities=_cities(
            "Madrid",
            "Barcelona",
            "Valencia",
            "Sevilla",
            "Bilbao",
            "Zaragoza",
            "Málaga",
            "Vigo",
            "Córdoba",
            "Granada",
            "Toledo",
            "Salamanca",
        ),
        projects=("Atlas", "Orion", "Mistral", "Harbor"),
        weekdays=("lunes", "martes", "miércoles", "jueves", "viernes"),
        gadgets=("móvil", "portátil", "patinete eléctrico", "reloj inteligente"),
        money=(12, 140, 1),
    ),
    "de": NoteLanguage(
        templates=(
            "Kurzes Meeting mit {p}: der Zeitplan für {x} verschiebt sich um eine Woche.",
            "{p} ist nächste Woche dienstlich in {c}, zurück am Donnerstag.",
            "Am Wochenende {t} ausprobiert, die Doku ist ziemlich verständlich.",
            "{p} hat mir {t} empfohlen, schaue ich mir in Ruhe an.",
            "Wocheneinkauf im Supermarkt: {n} Euro.",
            "Paginierungsfehler in {x} behoben, alle Tests grün.",
            "{p} hat Fotos von der Messe in {c} geschickt.",
            "Zwei Stunden im Café, dafür ist der Wochenbericht für {x} fertig.",
            "Geburtstagskarte an {p} verschickt.",
            "{p} fragt, ob die Demo von {x} auf {w} verschoben werden kann.",
            "Im Zug nach {c}, unterwegs ein halbes Buch gelesen.",
            "In {c} regnet es, der Flug von {p} hat {m} Minuten Verspätung.",
            "Artikel über Performance-Tuning bei {t} gelesen und Notizen gemacht.",
            "Mit {p} den Lebenslauf durchgesehen, die Bewerbungen gehen an Firmen in {c}.",
            "Abendessen mit {p} in {c}, zusammen {n} Euro.",
            "Im Code-Review für {x} heute {k} Pull-Requests gemergt.",
            "{p} hat sich ein neues {g} gekauft.",
            "Die Eltern von {p} kommen am Wochenende aus {c} zu Besuch.",
            "{p} zieht nächsten Monat nach {c}.",
            "Tisch für {k} Personen in einem Restaurant in {c} reserviert, {p} kommt auch mit.",
        ),
        people=_plain(
            "Stefan", "Anja", "Markus", "Katrin", "Jörg", "Petra", "Florian", "Miriam", "Dirk", "Svenja", "Ralf", "Ute"
        ),
        cities=_cities(
            "Berlin",
            "München",
            "Köln",
            "Frankfurt",
            "Stuttgart",
            "Leipzig",
            "Dresden",
            "Bremen",
            "Nürnberg",
            "Hamburg",
            "Freiburg",
            "Kassel",
        ),
        projects=("Nordlicht", "Atlas", "Orion", "Harbor"),
        weekdays=("Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag"),
        gadgets=("Handy", "Fahrrad", "Tablet", "E-Bike"),
        money=(12, 140, 1),
    ),
    "fr": NoteLanguage(
        templates=(
            "Point rapide avec {p} : le planning du projet {x} glisse d'une semaine.",
            "{p} est en déplacement à {c} la semaine prochaine, retour jeudi.",
            "Testé {t} ce week-end ; la doc est plutôt claire.",
            "{p} m'a conseillé {t}, à regarder quand j'aurai le temps.",
            "Courses au supermarché : {n} euros.",
            "Corrigé un bug de pagination dans le projet {x}, tous les tests passent.",
            "{p} a envoyé les photos du salon de {c}.",
            "Deux heures au café pour finir le rapport hebdo du projet {x}.",
            "Envoyé une carte d'anniversaire à {p}.",
            "{p} demande si la démo du projet {x} peut être décalée à {w}.",
            "En train pour {c} ; lu la moitié d'un livre pendant le trajet.",
            "Il pleut à {c} et le vol {de_p} a {m} minutes de retard.",
            "Lu un article sur l'optimisation des performances avec {t}, pris quelques notes.",
            "Relu le CV {de_p} avant ses candidatures dans des boîtes à {c}.",
            "Dîner avec {p} à {c} : {n} euros en tout.",
            "Revue de code du projet {x} : {k} pull requests fusionnées aujourd'hui.",
            "{p} s'est acheté un nouveau {g}.",
            "Les parents {de_p} viennent de {c} ce week-end.",
            "{p} déménage à {c} le mois prochain.",
            "Table réservée pour {k} dans un resto à {c}, {p} vient aussi.",
        ),
        people=[
            _fr_person(name)
            for name in (
                "Nicolas",
                "Camille",
                "Mathieu",
                "Aurélie",
                "Benoît",
                "Céline",
                "Olivier",
                "Sandrine",
                "Guillaume",
                "Émilie",
                "Laurent",
                "Manon",
            )
        ],
        cities=_cities(
            "Paris",
            "Lyon",
            "Marseille",
            "Toulouse",
            "Bordeaux",
            "Lille",
            "Nantes",
            "Strasbourg",
            "Montpellier",
            "Rennes",
            "Nice",
            "Biarritz",
        ),
        projects=("Mistral", "Atlas", "Orion", "Harbor"),
        weekdays=("lundi", "mardi", "mercredi", "jeudi", "vendredi"),
        gadgets=("téléphone", "vélo", "casque audio", "sac à dos"),
        money=(12, 140, 1),
    ),
    "ru": NoteLanguage(
        templates=(
            "Короткий созвон с {p_ins}: сроки по проекту {x} сдвигаются на неделю.",
            "{p} на следующей неделе в командировке в {c_prep}, вернётся в четверг.",
            "На выходных разбирался с {t}, документация вполне понятная.",
            "{p} советует посмотреть {t}, надо будет выбрать время.",
            "Продукты в супермаркете: {n} рублей.",
            "Поправил баг с пагинацией в проекте {x}, все тесты зелёные.",
            "{p} прислал{a} фотографии с выставки в {c_prep}.",
            "Два часа просидел в кафе, зато дописал недельный отчёт по проекту {x}.",
            "Отправил {p_dat} открытку ко дню рождения.",
            "{p} спрашивает, можно ли перенести демо проекта {x} на {w}.",
            "На поезде в {c_acc}, по дороге прочитал полкниги.",
            "В {c_prep} дождь, рейс {p_gen} задерживается на {m} минут.",
            "Прочитал статью про оптимизацию {t}, сделал пару заметок.",
            "Посмотрели с {p_ins} резюме перед откликами на вакансии в {c_prep}.",
            "Ужинали с {p_ins} в {c_prep}, вышло {n} рублей на двоих.",
            "На код-ревью по проекту {x} сегодня влили {k} пул-реквестов.",
            "{p} купил{a} новый {g}.",
            "Родители {p_gen} на выходных приезжают из {c_gen}.",
            "{p} в следующем месяце переезжает в {c_acc}.",
            "Забронировал столик на {k} человек в {c_prep}, {p} тоже придёт.",
        ),
        people=[
            _ru_person("Андрей", "Андрея", "Андрею", "Андреем", False),
            _ru_person("Ольга", "Ольги", "Ольге", "Ольгой", True),
            _ru_person("Сергей", "Сергея", "Сергею", "Сергеем", False),
            _ru_person("Наталья", "Натальи", "Наталье", "Натальей", True),
            _ru_person("Дмитрий", "Дмитрия", "Дмитрию", "Дмитрием", False),
            _ru_person("Татьяна", "Татьяны", "Татьяне", "Татьяной", True),
            _ru_person("Павел", "Павла", "Павлу", "Павлом", False),
            _ru_person("Юлия", "Юлии", "Юлии", "Юлией", True),
            _ru_person("Алексей", "Алексея", "Алексею", "Алексеем", False),
            _ru_person("Ксения", "Ксении", "Ксении", "Ксенией", True),
            _ru_person("Виктор", "Виктора", "Виктору", "Виктором", False),
            _ru_person("Марина", "Марины", "Марине", "Мариной", True),
        ],
        cities=[
            _ru_city("Москва", "Москве", "Москву", "Москвы"),
            _ru_city("Новосибирск", "Новосибирске", "Новосибирск", "Новосибирска"),
            _ru_city("Екатеринбург", "Екатеринбурге", "Екатеринбург", "Екатеринбурга"),
            _ru_city("Нижний Новгород", "Нижнем Новгороде", "Нижний Новгород", "Нижнего Новгорода"),
            _ru_city("Самара", "Самаре", "Самару", "Самары"),
            _ru_city("Калининград", "Калининграде", "Калининград", "Калининграда"),
            _ru_city("Ярославль", "Ярославле", "Ярославль", "Ярославля"),
            _ru_city("Петербург", "Петербурге", "Петербург", "Петербурга"),
            _ru_city("Тверь", "Твери", "Тверь", "Твери"),
            _ru_city("Воронеж", "Воронеже", "Воронеж", "Воронежа"),
            _ru_city("Казань", "Казани", "Казань", "Казани"),
            _ru_city("Сочи", "Сочи", "Сочи", "Сочи"),
        ],
        projects=("«Сокол»", "Orion", "Atlas", "Nordlicht"),
        weekdays=("понедельник", "вторник", "среду", "четверг", "пятницу"),
        gadgets=("телефон", "ноутбук", "велосипед", "планшет"),
        money=(500, 4500, 10),  # a multiple of ten: always "рублей"
        counts=(5, 9),  # "пул-реквестов", "человек"
    ),
    "ar": NoteLanguage(
        templates=(
            "اجتماع قصير مع {p}: جدول مشروع {x} تأخر أسبوعًا.",
            "{p} في رحلة عمل إلى {c} الأسبوع القادم، والعودة يوم الخميس.",
            "جرّبت {t} في عطلة نهاية الأسبوع، والتوثيق واضح إلى حد كبير.",
            "نصيحة من {p}: أن أجرب {t} عندما يتوفر الوقت.",
            "مشتريات السوبرماركت اليوم: {n} ريال.",
            "أصلحت خطأً في ترقيم الصفحات في مشروع {x}، وكل الاختبارات ناجحة.",
            "وصلت صور معرض {c} من {p}.",
            "قضيت ساعتين في المقهى وأنهيت التقرير الأسبوعي لمشروع {x}.",
            "أرسلت بطاقة تهنئة بعيد الميلاد إلى {p}.",
            "سؤال من {p}: هل يمكن تأجيل العرض التجريبي لمشروع {x} إلى يوم {w}؟",
            "في الطريق إلى {c}؛ قرأت نصف كتاب في الرحلة.",
            "أمطار في {c}، ورحلة {p} متأخرة {m} دقيقة.",
            "قرأت مقالًا عن تحسين أداء {t} ودوّنت بعض الملاحظات.",
            "راجعت مع {p} السيرة الذاتية قبل التقديم على وظائف في {c}.",
            "عشاء مع {p} في {c}، والحساب {n} ريال.",
            "في مراجعة الكود لمشروع {x} اليوم دمجنا {k} طلبات دمج.",
            "{bought} {p} {g}.",
            "والدا {p} قادمان من {c} في عطلة نهاية الأسبوع.",
            "{p} {moves} إلى {c} الشهر القادم.",
            "حجزت طاولة لـ{k} أشخاص في {c}، ومعنا {p}.",
        ),
        people=[
            _ar_person("أحمد", False),
            _ar_person("حسان", False),
            _ar_person("سارة", True),
            _ar_person("فاطمة", True),
            _ar_person("ماجد", False),
            _ar_person("لمى", True),
            _ar_person("ناصر", False),
            _ar_person("منصور", False),
            _ar_person("دانة", True),
            _ar_person("وليد", False),
            _ar_person("بدر", False),
            _ar_person("جنى", True),
        ],
        cities=_cities(
            "الرياض",
            "جدة",
            "الدمام",
            "دبي",
            "أبوظبي",
            "الدوحة",
            "القاهرة",
            "الإسكندرية",
            "عمّان",
            "بيروت",
            "مسقط",
            "تونس",
        ),
        projects=("واحة", "Orion", "Atlas", "Harbor"),
        weekdays=("الأحد", "الاثنين", "الثلاثاء", "الأربعاء", "الخميس"),
        gadgets=("هاتفًا جديدًا", "حاسوبًا محمولًا جديدًا", "دراجة هوائية جديدة", "جهازًا لوحيًا جديدًا"),
        money=(100, 1500, 100),  # whole hundreds: "ريال" after each
        counts=(3, 9),  # "طلبات"، "أشخاص"
    ),
    "en": NoteLanguage(
        templates=(
            "Quick sync with {p}: the {x} schedule slips by a week.",
            "{p} is travelling to {c} for work next week, back on Thursday.",
            "Tried {t} at home over the weekend; the docs are pretty clear.",
            "{p} recommended {t}; worth a look when there's time.",
            "Grocery run: ${n}.",
            "Fixed a pagination bug in {x}; all tests green.",
            "{p} sent photos from the trade fair in {c}.",
            "Two hours in a café finishing the weekly report for {x}.",
            "Mailed a birthday card to {p}.",
            "{p} asks whether the {x} demo can move to {w}.",
            "On the way to {c}; read half a book on the trip.",
            "Rain in {c}; {p}'s flight is {m} minutes late.",
            "Read an article on tuning {t} performance, took a few notes.",
            "Went over {p}'s CV before the applications to companies in {c}.",
            "Dinner with {p} in {c}, ${n} in total.",
            "Merged {k} pull requests in today's {x} code review.",
            "{p} bought a new {g}.",
            "{p}'s parents are visiting from {c} this weekend.",
            "{p} is moving to {c} next month.",
            "Booked a table for {k} at a restaurant in {c}; {p} is coming too.",
        ),
        people=_plain(
            "Chris", "Olivia", "Ben", "Hannah", "Ryan", "Grace", "Nathan", "Chloe", "Tyler", "Zoe", "Kevin", "Laura"
        ),
        cities=_cities(
            "Boston",
            "Chicago",
            "Denver",
            "Seattle",
            "Austin",
            "Portland",
            "Philadelphia",
            "Toronto",
            "London",
            "Dublin",
            "Columbus",
            "Lisbon",
        ),
        projects=("Harbor", "Atlas", "Orion", "Nordlicht"),
        weekdays=("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"),
        gadgets=("phone", "laptop", "bike", "tablet"),
        money=(12, 140, 1),
    ),
}
NOTE_LANGUAGES = (*LANGUAGES, "en")


def _note(rng: random.Random, spec: NoteLanguage) -> str:
    low, high, step = spec.money
    fields: dict[str, str] = {
        **rng.choice(spec.people),
        **rng.choice(spec.cities),
        "t": rng.choice(TOOLS),
        "x": rng.choice(spec.projects),
        "w": rng.choice(spec.weekdays),
        "g": rng.choice(spec.gadgets),
        "n": spec.money_format.format(rng.randrange(low, high + 1, step)),
        "m": str(rng.choice(spec.minutes)),
        "k": str(rng.randint(*spec.counts)),
    }
    return rng.choice(spec.templates).format(**fields)


# ---------------------------------------------------------------------------------------------------------------
# Facts, questions, halves


@dataclass(frozen=True)
class Fact:
    """One stored memory that answers questions: `key` is its language and its index in that language's list."""

    key: str
    lang: str
    index: int
    text: str

    @property
    def half(self) -> str:
        return "A" if self.index % 2 == 0 else "B"


@dataclass(frozen=True)
class Question:
    """A question of one case (a language, "en", "en>xx" or "xx>en"), in `lang`, answered by the fact `answer`."""

    case: str
    lang: str
    text: str
    answer: str


@dataclass(frozen=True)
class Note:
    lang: str
    text: str


def ordinary(per_language: int = NOTES_PER_LANGUAGE, seed: int = SEED) -> list[Note]:
    """`per_language` distinct notes in each of the eight languages, one language's block after another."""
    out: list[Note] = []
    for lang in NOTE_LANGUAGES:
        rng, seen = random.Random(f"{seed}-{lang}"), set[str]()
        while len(seen) < per_language:
            text = _note(rng, NOTES[lang])
            if text not in seen:
                seen.add(text)
                out.append(Note(lang, text))
    return out


def facts() -> list[Fact]:
    """Every fact of the set: the seven languages' facts, then the English ones."""
    out = [Fact(f"{lang}-{i:02d}", lang, i, row[0]) for lang in LANGUAGES for i, row in enumerate(FACTS[lang])]
    out += [Fact(f"en-{i:02d}", "en", i, row[0]) for i, row in enumerate(ENGLISH)]
    return out


def questions() -> list[Question]:
    """Every question of the set, each naming the fact that answers it."""
    out: list[Question] = []
    for lang in LANGUAGES:
        for i, row in enumerate(FACTS[lang]):
            out.append(Question(lang, lang, row[1], f"{lang}-{i:02d}"))
            if len(row) > 2:
                out.append(Question(CROSS_EN, "en", row[2], f"{lang}-{i:02d}"))
    for i, (_, english, lang, other) in enumerate(ENGLISH):
        out.append(Question("en", "en", english, f"en-{i:02d}"))
        out.append(Question(CROSS_XX, lang, other, f"en-{i:02d}"))
    return out


def half(values: Sequence[Any], name: str) -> list[Any]:
    """Half A is the even indexes, half B the odd ones."""
    return list(values[0 if name == "A" else 1 :: 2])


def half_facts(all_facts: Sequence[Fact], name: str, limit: int = 0) -> list[Fact]:
    """The facts of a half: by parity within each language's list; `limit`: at most that many per language."""
    chosen = [f for f in all_facts if f.half == name]
    if not limit:
        return chosen
    kept: dict[str, int] = {}
    out = []
    for f in chosen:
        kept[f.lang] = kept.get(f.lang, 0) + 1
        if kept[f.lang] <= limit:
            out.append(f)
    return out


def half_notes(all_notes: Sequence[Note], name: str, per_language: int = 0) -> list[Note]:
    """The notes of a half by index parity; `per_language`: at most that many of each language."""
    chosen = half(all_notes, name)
    if not per_language:
        return chosen
    kept: dict[str, int] = {}
    out = []
    for n in chosen:
        kept[n.lang] = kept.get(n.lang, 0) + 1
        if kept[n.lang] <= per_language:
            out.append(n)
    return out


@dataclass(frozen=True)
class Dated:
    """One memory to store, with when it was said; `fact` is the key of the fact it is (None: an ordinary note)."""

    text: str
    at: datetime
    fact: str | None = None


def timeline(chosen: Sequence[Fact], notes: Sequence[Note], seed: int = SEED) -> list[Dated]:
    """Every memory of a half in the order it is said: facts over FACT_SPAN, notes over NOTE_SPAN before NOW."""
    rng = random.Random(seed + 2)
    out = [Dated(f.text, _before(rng, FACT_SPAN), f.key) for f in chosen]
    out += [Dated(n.text, _before(rng, NOTE_SPAN)) for n in notes]
    out.sort(key=lambda d: d.at)
    return out


def _before(rng: random.Random, span: timedelta) -> datetime:
    """A time within `span` before NOW, in whole minutes, at least an hour before it."""
    return NOW - timedelta(minutes=rng.randint(60, int(span.total_seconds() // 60)))


# ---------------------------------------------------------------------------------------------------------------
# Scoring (pure)


def ranked_first(hit_ids: Sequence[str], answer: str) -> bool:
    return bool(hit_ids) and hit_ids[0] == answer


def within(hit_ids: Sequence[str], answer: str, top: int = TOP) -> bool:
    return answer in hit_ids[:top]


def shown(hits: Sequence[Any], answer: str, text: str) -> bool:
    """The answer's memory is among what a budgeted recall returns: whole, or by an excerpt that holds its text
    (as tests/bench/locomo.py's `found_ids` counts a long memory shown by an excerpt)."""
    for hit in hits:
        if hit.record.id == answer:
            return hit.excerpt is None or text in hit.excerpt.text
    return False


@dataclass
class Tally:
    """Counts of one case."""

    n: int = 0
    first: int = 0
    top: int = 0
    budget: int = 0
    chars: int = 0  # characters of recall's text at the budget, summed
    latencies: list[float] = field(default_factory=list)

    def merge(self, other: Tally) -> None:
        self.n += other.n
        self.first += other.first
        self.top += other.top
        self.budget += other.budget
        self.chars += other.chars
        self.latencies.extend(other.latencies)


@dataclass
class Score:
    """One half's tallies by case, with what `remember` made of each language's facts."""

    cases: dict[str, Tally] = field(default_factory=lambda: {case: Tally() for case in CASES})
    facts: dict[str, int] = field(default_factory=dict)  # facts stored, by language
    durable: dict[str, int] = field(default_factory=dict)  # of them, classified a durable kind (kept warm)
    notes: int = 0
    misses: list[dict[str, Any]] = field(default_factory=list)

    def merge(self, other: Score) -> None:
        for case, tally in other.cases.items():
            self.cases[case].merge(tally)
        for name in ("facts", "durable"):
            mine, theirs = getattr(self, name), getattr(other, name)
            for lang, count in theirs.items():
                mine[lang] = mine.get(lang, 0) + count
        self.notes += other.notes
        self.misses += other.misses

    def total(self, cases: Sequence[str]) -> Tally:
        out = Tally()
        for case in cases:
            out.merge(self.cases[case])
        return out


def share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"


def p50(values: Sequence[float]) -> str:
    return f"{statistics.median(values):.1f}" if values else "-"


ROWS: tuple[tuple[str, tuple[str, ...]], ...] = (
    *((CASE_NAMES[case], (case,)) for case in CASES),
    ("all seven languages, own-language questions", LANGUAGES),
    ("across languages (both directions)", (CROSS_EN, CROSS_XX)),
    ("all", CASES),
)


def table(scores: dict[str, Score]) -> list[str]:
    """Rows per case: first, top 3 and recall_all@256 over every half run, p50; with both halves, first per half."""
    names = [h for h in scores if h != "both"]
    whole = scores.get("both") or scores[names[0]]
    split = len(names) > 1
    head = f"| questions | n | first | top {TOP} | recall_all@{BUDGET} | recall p50 ms |"
    rule = "|---|---:|---:|---:|---:|---:|"
    if split:
        head += " " + " | ".join(f"first, half {h}" for h in names) + " |"
        rule += "---:|" * len(names)
    lines = [head, rule]
    for label, cases in ROWS:
        t = whole.total(cases)
        line = f"| {label} | {t.n} | {share(t.first, t.n)} | {share(t.top, t.n)} | {share(t.budget, t.n)} | "
        line += f"{p50(t.latencies)} |"
        if split:
            line += " " + " | ".join(share(scores[h].total(cases).first, scores[h].total(cases).n) for h in names)
            line += " |"
        lines.append(line)
    return lines


def diagnostics(score: Score) -> list[str]:
    """What `remember` and a budgeted recall did with each language, beside the ranking."""
    langs = [*LANGUAGES, "en"]
    kept = ", ".join(f"{lang} {score.durable.get(lang, 0)}/{score.facts.get(lang, 0)}" for lang in langs)
    sizes = []
    for lang in langs:
        t = score.cases[lang]
        sizes.append(f"{lang} {t.chars / t.n:.0f}" if t.n else f"{lang} -")
    return [
        f"- facts `remember` classified as a durable kind (kept warm, offered to the profile): {kept}",
        f"- characters of recall's text at {BUDGET} tokens (counted by script), mean per question: " + ", ".join(sizes),
    ]


# ---------------------------------------------------------------------------------------------------------------
# Runner


def _iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def run_half(
    name: str,
    chosen: Sequence[Fact],
    notes: Sequence[Note],
    asked: Sequence[Question],
    embedder: Any,
    log: Any,
    changed: Sequence[str] = (),
) -> Score:
    """One half in a fresh store: every memory through `remember` in date order, then every question.
    `changed`: recall settings as NAME=VALUE (a diagnostic run; by default the product's own)."""
    from tests.bench.locomo import with_values
    from tiers.memory import Memory, MemorySettings
    from tiers.records import Kind, MemoryIn

    durable_kinds = {Kind.IDENTITY, Kind.PREFERENCE, Kind.CONSTRAINT, Kind.RELATIONSHIP, Kind.HEALTH}
    score = Score(notes=len(notes))
    by_key = {f.key: f for f in chosen}
    ids: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        settings = MemorySettings()
        if changed:
            settings = dataclasses.replace(settings, recall=with_values(settings.recall, changed))
        memory = Memory(Path(tmp) / "ns", embedder, settings)
        started = time.perf_counter()
        dated = timeline(chosen, notes)
        for step, d in enumerate(dated):
            (stored,) = memory.remember([MemoryIn(content=d.text, occurred_at=_iso(d.at))], d.at + timedelta(seconds=5))
            if d.fact is not None:
                ids[d.fact] = stored.duplicate_of or stored.id
                lang = by_key[d.fact].lang
                score.facts[lang] = score.facts.get(lang, 0) + 1
                score.durable[lang] = score.durable.get(lang, 0) + (stored.kind in durable_kinds)
            if step % 200 == 0:
                print(
                    f"# half {name}: stored {step}/{len(dated)}, {time.perf_counter() - started:.0f} s",
                    file=log,
                    flush=True,
                )
        for q in asked:
            answer, fact = ids[q.answer], by_key[q.answer]
            tally = score.cases[q.case]
            t0 = time.perf_counter()
            packed = memory.recall(q.text, NOW, limit=LIMIT)
            tally.latencies.append((time.perf_counter() - t0) * 1000)
            hit_ids = [h.record.id for h in packed.hits]
            first, top = ranked_first(hit_ids, answer), within(hit_ids, answer)
            t0 = time.perf_counter()
            budgeted = memory.recall(q.text, NOW, limit=BUDGET_LIMIT, max_tokens=BUDGET)
            tally.latencies.append((time.perf_counter() - t0) * 1000)
            if budgeted.tokens > BUDGET:
                raise AssertionError(f"recall returned {budgeted.tokens} tokens over a {BUDGET}-token budget")
            found = shown(budgeted.hits, answer, fact.text)
            tally.n += 1
            tally.first += first
            tally.top += top
            tally.budget += found
            tally.chars += len(budgeted.text)
            if not first:
                texts = {h.record.id: h.record.content for h in packed.hits}
                score.misses.append(
                    {
                        "half": name,
                        "case": q.case,
                        "question": q.text,
                        "answer": fact.text,
                        "rank": hit_ids.index(answer) + 1 if answer in hit_ids else None,
                        "first": texts.get(hit_ids[0]) if hit_ids else None,
                        "at_budget": found,
                    }
                )
        print(f"# half {name}: {len(asked)} questions asked, {time.perf_counter() - started:.0f} s", file=log)
        memory.close()
    return score


def load_embedder(model: str, path: str | None) -> Any:
    """The embedder to measure: `path` ("module:Class" or "file.py:Class", constructed with no arguments), else the
    product's embedder of `model` as MEMTIERS_EMBED_MODEL names it (tiers/model/catalog.py). Loaded and warmed up."""
    if path:
        where, _, cls = path.rpartition(":")
        if not where or not cls:
            raise SystemExit(f"--embedder {path!r}: give module:Class or path/to/file.py:Class")
        if where.endswith(".py"):
            spec = importlib.util.spec_from_file_location(Path(where).stem, where)
            if spec is None or spec.loader is None:
                raise SystemExit(f"--embedder: cannot load {where}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
        embedder = getattr(module, cls)()
    else:
        from tiers.model.catalog import open_embedder

        embedder = open_embedder(model)
    load = getattr(embedder, "load", None)
    if callable(load):
        load()
    embedder.embed(["warm up"])
    return embedder


def commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--half", choices=("A", "B", "both"), default="both")
    parser.add_argument(
        "--model", default="default", help="as MEMTIERS_EMBED_MODEL names it: default, multilingual or a full name"
    )
    parser.add_argument("--embedder", help="module:Class or path/to/file.py:Class implementing the Embedder protocol")
    parser.add_argument("--limit-facts", type=int, default=0, help="at most N facts of each language per half")
    parser.add_argument("--notes", type=int, default=0, help="at most N notes of each language per half")
    parser.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE", help="recall settings to change")
    parser.add_argument("--out", type=Path, help="append the markdown here")
    parser.add_argument("--misses", type=Path, help="write the questions not ranked first here (JSON lines)")
    args = parser.parse_args(argv)

    all_facts, all_questions, all_notes = facts(), questions(), ordinary()
    embedder = load_embedder(args.model, args.embedder)
    started = time.perf_counter()
    scores: dict[str, Score] = {}
    for name in ("A", "B") if args.half == "both" else (args.half,):
        chosen = half_facts(all_facts, name, args.limit_facts)
        keys = {f.key for f in chosen}
        asked = [q for q in all_questions if q.answer in keys]
        notes = half_notes(all_notes, name, args.notes)
        scores[name] = run_half(name, chosen, notes, asked, embedder, sys.stderr, args.set)
    if len(scores) == 2:
        both = Score()
        for s in scores.values():
            both.merge(s)
        scores["both"] = both
    elapsed = time.perf_counter() - started
    load = " / ".join(f"{v:.1f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    whole = scores.get("both") or next(iter(scores.values()))
    per_lang = ", ".join(f"{lang} {len(FACTS[lang])}" for lang in LANGUAGES)
    lines = [
        f"Multilingual recall: facts {per_lang}, en {len(ENGLISH)}; {len(all_notes)} ordinary notes "
        f"({len(all_notes) // len(NOTE_LANGUAGES)} in each of {', '.join(NOTE_LANGUAGES)}); halves by index parity; "
        f"run: --half {args.half}"
        + (f" --limit-facts {args.limit_facts}" if args.limit_facts else "")
        + (f" --notes {args.notes}" if args.notes else "")
        + (f" --set {' '.join(args.set)}" if args.set else "")
        + f"; {whole.notes} notes stored",
        f"model {getattr(embedder, 'name', type(embedder).__name__)}"
        + (f" (--embedder {args.embedder})" if args.embedder else "")
        + f"; run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC at commit {commit()} on {platform.machine()} "
        f"{platform.system()}, Python {platform.python_version()}, {elapsed:.0f} s, load average {load}; {packages()}",
        "",
        *table(scores),
        "",
        *diagnostics(whole),
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        with args.out.open("a") as f:
            f.write(text + "\n")
    if args.misses:
        with args.misses.open("w") as f:
            for miss in whole.misses:
                f.write(json.dumps(miss, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
