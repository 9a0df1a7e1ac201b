"""classify.py's durable-fact rules said in Chinese, Japanese, Spanish, German, French, Russian and Arabic.

The same shape as the English rules, kept narrow: a fact is durable only when the user says it of themselves
(我对花生过敏, soy alérgico a, ich bin allergisch gegen, je suis allergique, у меня аллергия, لدي حساسية), or
names their own family or friends (我女儿, mi hermano, meine Tochter, ma sœur, моя дочь, ابنتي). What someone
else has ("Mi compañero Javier es alérgico...") is about them, not the user's health: only the relationship, if
any, is kept. Japanese states facts about oneself without a subject as often as with one; only a sentence with
私, 僕 or 俺 is read as the user's own.
"""

from __future__ import annotations

import re

from tiers.records import Kind
from tiers.text.languages import may_hold

_B, _E = r"(?<!\w)", r"(?!\w)"  # word edges that hold in every script

# Someone of the user's, as the English rule's "my wife", "my boss", "my dog" (a colleague, a neighbour, a doctor
# are not kept as a relationship, as in English), each followed by a name where one is given.
_ZH_FAMILY = (
    "妈妈|妈|母亲|爸爸|爸|父亲|父母|老婆|妻子|老公|丈夫|儿子|女儿|孩子|哥哥|弟弟|姐姐|妹妹|朋友|老板|上司|岳父|岳母|公公|"
    "婆婆|爷爷|奶奶|外公|外婆|男朋友|女朋友|嫂子|姐夫|妹夫|弟媳|猫|狗"
)
_FAMILY = (
    r"(?i:mis? (?:amig[oa]|jef[ea]|madre|mamá|padre|papá|herman[oa]|hij[oa]|espos[oa]|marido|mujer|novi[oa]|pareja|"
    r"abuel[oa]|prim[oa]|tí[oa]|sobrin[oa]|cuñad[oa]|suegr[oa]|perr[oa]|gat[oa])s?|"
    r"mein\w* (?:freund\w*|chef\w*|mutter|mama|vater|papa|bruder|schwester|sohn|tochter|kinder|frau|mann|"
    r"partner\w*|oma|opa|cousin\w*|tante|onkel|nichte|neffe|schwager|schwägerin|schwieger\w+|hund|katze)|"
    r"(?:mon|ma|mes) (?:ami|amie|copain|copine|patron\w*|chef|mère|maman|père|papa|frère|s[œo]e?ur|fils|fille|"
    r"enfants|femme|mari|partenaire|grand-mère|grand-père|belle-\w+|beau-\w+|cousin\w*|tante|oncle|nièce|neveu|"
    r"chien\w*|chat\w*)s?|"
    r"(?:мой|моя|моего|моей|моему|моим|мои|моих) (?:друг\w*|подруг\w*|начальни\w*|мам\w*|мат[ьие]\w*|пап\w*|"
    r"от[ею]ц\w*|брат\w*|сестр\w*|сын\w*|доч\w*|дет\w*|жен\w*|муж\w*|бабушк\w*|дедушк\w*|свекров\w*|тёщ\w*|"
    r"тещ\w*|тест(?:ь|я|ю|ем|е)|свёкр\w*|свекр\w*|собак\w*|кот(?:а|у|ом|е)?|кошк\w*)|"
    r"زوجتي|زوجي|ابني|ابنتي|بنتي|أمي|امي|والدتي|أبي|ابي|والدي|أخي|اخي|أختي|اختي|مديري|مديرتي|صديقي|صديقتي|جدتي|جدي|"
    r"حماتي|حماي)"
)
_OTHERS = (
    r"(?i:mis? (?:compañer[oa]|colega|vecin[oa]|médic[oa])s?|mein\w* (?:kolleg\w*|nachbar\w*|arzt|ärztin)|"
    r"(?:mon|ma|mes) (?:collègue|voisin\w*|médecin)s?|"
    r"(?:мой|моя|моего|моей|моему|моим|мои|моих) (?:коллег\w*|сосед\w*|врач\w*)|زميلي|زميلتي|جاري|جارتي)"
)
_CAPITAL = "A-ZÁÉÍÓÚÑÄÖÜÀÂÇÈÊËÎÏÔÛА-ЯЁ"
_NAMED = rf"(?: [{_CAPITAL}][\w'-]+)?"
# What someone of the user's has or does is theirs: "Mi compañero Javier es alérgico", "我妈有高血压", "زميلي خالد",
# and so is what anyone named after "my" has ("Meine Schwägerin Jana ist schwanger").
_SOMEONE = re.compile(
    rf"我(?:的|家的?)?(?:{_ZH_FAMILY}|同事|邻居|室友)|{_B}(?:{_FAMILY}|{_OTHERS}){_E}{_NAMED}(?: \w+)?|"
    rf"{_B}(?i:mis?|mein\w*|mon|ma|mes|мой|моя|моего|моей|моему|моим|мои|моих) \w+ [{_CAPITAL}][\w'-]+"
)
_RELATIONSHIP = re.compile(
    rf"我(?:的|家的?)?(?:{_ZH_FAMILY})|"
    "(?:^|[、。，\\s])(?:妻|夫|息子|娘|母|父|兄|姉|妹|祖母|祖父|義母|義父|甥|姪|いとこ)(?:は|が|の)|"
    rf"{_B}{_FAMILY}{_E}"
)
# The user said to be the subject: 我, 私, "soy", "tengo", "ich", "je", "я", "لدي"...
_FIRST_PERSON = re.compile(
    "我|私|僕|俺|わたし|ぼく|"
    rf"{_B}(?:yo|me|mi|mis|soy|estoy|tengo|puedo|tomo|ich|mich|mir|mein\w*|je|j['’]|moi|mon|ma|mes|я|меня|мне|"
    rf"мой|моя|моё|мое|мои|моего|моей|моим|моих|أنا|انا|لدي|لديّ|عندي|أعاني|فصيلة دمي|لا أستطيع){_E}",
    re.I,
)
_HEALTH = re.compile(
    "过敏|哮喘|糖尿病|癫痫|乳糜泻|不耐受|怀孕|血型|型血|胰岛素|确诊|不能吃|不能喝|"
    "アレルギー|喘息|ぜんそく|糖尿病|てんかん|妊娠|血液型|インスリン|花粉症|食べられない|飲めない|"
    rf"{_B}(?:alérgic[oa]|alergia|anafila\w*|intoleran\w*|diabet\w*|asma|epilep\w*|celíac[oa]|celiaquía|embarazada|"
    r"grupo sanguíneo|insulina|no puedo (?:comer|beber|tomar)|"
    r"allergisch|\w*allergie|unverträglich\w*|diabet\w*|asthma|epileps\w*|zöliakie|schwanger|blutgruppe|insulin|"
    r"allergique|allergie|intoléran\w*|diabét\w*|diabète|asthm\w*|épilep\w*|c[œo]e?liaque|enceinte|groupe sanguin|"
    r"insuline|ne (?:peux|dois) pas (?:manger|boire)|"
    r"аллерг\w*|анафилак\w*|непереносим\w*|диабет\w*|астм\w*|эпилепс\w*|целиаки\w*|беременн\w*|групп[аыу] крови|"
    r"инсулин\w*|не могу (?:есть|пить)|"
    r"حساسية|الحساسية|الربو|ربو|السكري|سكري|الصرع|صرع|حامل|فصيلة دمي|الأنسولين|الانسولين|"
    rf"لا أستطيع (?:أكل|تناول|شرب)){_E}",
    re.I,
)
# These say who the user is, and in the first person by their own form (me llamo, ich wohne, я работаю, أعيش).
_IDENTITY = re.compile(
    "我叫|我的名字是|我住在|我来自|我出生在|我的生日|我在\\S{1,12}(?:工作|上班)|"
    "我是\\S{0,8}(?:工程师|医生|老师|律师|设计师|学生|护士|程序员)|"
    "(?:私|僕|俺)の名前は|(?:私|僕|俺)は\\S{1,12}(?:に住んで|で働いて|出身)|"
    rf"{_B}(?:me llamo|mi nombre es|vivo en|trabajo (?:en|para|como|de)|nací en|mi cumpleaños|soy de|"
    r"ich heiße|ich heisse|mein name ist|ich wohne in|ich lebe in|ich arbeite (?:bei|als|für|in)|ich komme aus|"
    r"ich bin in \w+ geboren|mein geburtstag|"
    r"je m['’]appelle|mon nom est|j['’]habite|je vis à|je travaille (?:chez|comme|pour|à)|je viens de|je suis née?|"
    r"mon anniversaire|"
    r"меня зовут|мо[её] имя|я живу в|я работаю|я родил(?:ся|ась)|мой день рождения|"
    rf"اسمي|أعيش في|أسكن في|أعمل في|أعمل ك|ولدت في|عيد ميلادي){_E}",
    re.I,
)
_PREFERENCE = re.compile(
    "我(?:很|最|非常|特别|更)?(?:喜欢|爱吃|爱喝|讨厌|偏爱)|我最喜欢的|我(?:是素食者|吃素|宁愿)|"
    "(?:私|僕|俺)は\\S{0,12}(?:が好き|が大好き|が嫌い|が苦手)|(?:私|僕|俺)はベジタリアン|"
    rf"{_B}(?:me encanta|me gusta|prefiero|odio|no soporto|detesto|soy (?:vegan|vegetarian)[oa]|"
    r"ich (?:mag|liebe|hasse|bevorzuge)|mein\w* lieblings\w*|ich bin (?:veganer\w*|vegetarier\w*)|"
    r"j['’]aime|j['’]adore|je déteste|je préfère|je n['’]aime pas|je suis (?:végétarien\w*|végétalien\w*|vegan\w*)|"
    r"я (?:люблю|обожаю|ненавижу|предпочитаю|терпеть не могу)|мне нравится|мо[йяеё] любим\w*|"
    r"я (?:вегетариан\w*|веган\w*)|"
    rf"أحب|أكره|أفضّل|لا أحب|المفضل لدي|المفضلة لدي|أنا نباتي|انا نباتي){_E}",
    re.I,
)
# A name after "me llamo", "ich heiße", "je m'appelle", "меня зовут": its capitalised words.
_NAME = re.compile(
    r"(?i:me llamo|mi nombre es|ich heiße|ich heisse|mein name ist|je m['’]appelle|mon nom est|меня зовут|"
    r"мо[её] имя) ([A-ZÁÉÍÓÚÑÄÖÜÀÂÇÈÊËÎÏÔÛА-ЯЁ][\w'-]+(?: [A-ZÁÉÍÓÚÑÄÖÜÀÂÇÈÊËÎÏÔÛА-ЯЁ][\w'-]+){0,3})"
)


# Each rule's ASCII form holds one of these as a word ("mi", "ich", "je", the "j" of "j'aime"), or a word that
# begins "mein": an English note without them skips the rules (languages.may_hold).
_ASCII_OPENERS = frozenset(
    (  # noqa: SIM905
        "me mi mis yo soy estoy tengo puedo tomo vivo trabajo prefiero odio no detesto ich mich mir je j moi mon ma mes"
    ).split()
)


def durable_kind(text: str) -> tuple[Kind, str | None] | None:
    """The durable kind a statement in one of these languages makes about the user, and a name it gives; None
    when it makes none."""
    if not may_hold(text, _ASCII_OPENERS, ("mein",)):
        return None
    own = _SOMEONE.sub("someone", text)
    if _FIRST_PERSON.search(own) and _HEALTH.search(own):
        return Kind.HEALTH, None
    if _IDENTITY.search(own):
        name = _NAME.search(own)
        return Kind.IDENTITY, name.group(1) if name else None
    if _RELATIONSHIP.search(text):
        return Kind.RELATIONSHIP, None
    if _PREFERENCE.search(own):
        return Kind.PREFERENCE, None
    return None
