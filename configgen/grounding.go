package configgen

import (
	"regexp"
)

// A query about no code in particular (reference none) is still asked
// with a file open: a developer asks about a language feature or a task
// that the code in front of them shows, not about a CSV parser while a
// money formatter is open. Each topic and task has a pattern; a wording
// with {topic} or {task} is used only when the code in view matches one,
// and otherwise a wording about the language alone.

// topic is a language feature, named in English (developers keep the
// term in every locale), and the code that shows it.
type topic struct {
	name string
	code *regexp.Regexp
}

func generalTopics() map[string][]topic {
	t := func(name, re string) topic { return topic{name, regexp.MustCompile(re)} }
	return map[string][]topic{
		"go": {t("goroutines", `\bgo\s+(func\b|[\w.]+\()`), t("channels", `\bchan\b|<-`), t("interfaces", `\binterface\s*\{`),
			t("error wrapping", `%w|errors\.(Is|As|Unwrap)\(`), t("context cancellation", `context\.Context|ctx\.Done\(\)`),
			t("generics", `\[\w+ (any|comparable)\b`), t("defer", `\bdefer\b`)},
		"python": {t("generators", `\byield\b`), t("decorators", `(?m)^\s*@\w+`), t("context managers", `\bwith\b[^\n:]*\bas\b|__enter__`),
			t("asyncio", `\basync\s+def\b|\bawait\b`), t("dataclasses", `@dataclass`),
			t("list comprehensions", `\[[^\]\n]+\bfor\b[^\]\n]+\bin\b`), t("type hints", `\)\s*->\s*\w`)},
		"javascript": {t("promises", `\bPromise\b|\.then\(`), t("closures", `return\s+(function\b|\([^)]*\)\s*=>|\w+\s*=>)`),
			t("async/await", `\basync\b|\bawait\b`), t("the event loop", `\bsetTimeout\b|\bsetImmediate\b|process\.nextTick`),
			t("prototypes", `\.prototype\b`), t("modules", `(?m)^\s*(import|export)\b|\brequire\(`), t("destructuring", `\b(const|let|var)\s*[{\[]`)},
		"typescript": {t("generics", `<[A-Z]\w*(\s+extends\b[^>]*)?>`), t("union types", `:\s*[\w\[\]]+\s*\|\s*[\w\[]`),
			t("type guards", `\)\s*:\s*\w+\s+is\s+\w|typeof \w+ ===`), t("enums", `\benum\s+\w`),
			t("utility types", `\b(Partial|Pick|Omit|Record|Readonly)<`), t("interfaces", `\binterface\s+\w`), t("async/await", `\basync\b|\bawait\b`)},
		"java": {t("streams", `\.stream\(\)`), t("generics", `\w<[A-Z]\w*(, ?[A-Z]\w*)*>`), t("the Optional type", `\bOptional\b`),
			t("records", `\brecord\s+\w+\s*\(`), t("interfaces", `\binterface\s+\w|\bimplements\b`), t("exceptions", `\bthrows?\b|\bcatch\s*\(`),
			t("CompletableFuture", `\bCompletableFuture\b`)},
	}
}

// taskCode are the patterns of the general tasks, in the order of every
// locale's list in generalTasks.
var taskCode = []*regexp.Regexp{
	regexp.MustCompile(`(?i)csv`),
	regexp.MustCompile(`(?is)(retr(y|ies)|backoff).*http|http.*(retr(y|ies)|backoff)`),
	regexp.MustCompile(`(?i)readline|bufio\.Scanner|readlines|createInterface|for \w+ in (f|file|fh)\b`),
	regexp.MustCompile(`(?i)dedup|distinct|\bseen\b|new Set\(`),
	regexp.MustCompile(`(?i)e-?mail`),
	regexp.MustCompile(`(?i)cache|memo`),
	regexp.MustCompile(`(?i)currency|money|price`),
	regexp.MustCompile(`(?i)\bsort`),
	regexp.MustCompile(`(?i)\bwrap`),
	regexp.MustCompile(`(?i)\bmean\b|average|\bavg\b`),
	regexp.MustCompile(`(?i)\bjson\b`),
	regexp.MustCompile(`(?i)\bevents?\b|listener|\bemit`),
	regexp.MustCompile(`(?i)\bqueue|enqueue|dequeue`),
}

func generalTasks() map[string][]string {
	return map[string][]string{
		"en": {"parses a CSV file", "retries an HTTP request", "reads a file line by line", "removes duplicates from a list",
			"validates an email address", "caches expensive results", "formats money amounts", "sorts a list of records",
			"wraps long lines of text", "computes an average", "parses JSON", "handles events with listeners", "manages a queue"},
		"zh": {"解析 CSV 文件", "重试 HTTP 请求", "逐行读取文件", "列表去重", "校验邮箱地址", "缓存耗时的计算结果", "格式化金额",
			"给记录列表排序", "给长文本换行", "计算平均值", "解析 JSON", "用监听器处理事件", "管理一个队列"},
		"ja": {"CSV ファイルを解析する", "HTTP リクエストを再試行する", "ファイルを1行ずつ読む", "リストの重複を取り除く", "メールアドレスを検証する",
			"重い計算結果をキャッシュする", "金額を整形する", "レコードのリストを並べ替える", "長いテキストを折り返す", "平均を計算する",
			"JSON を解析する", "リスナーでイベントを処理する", "キューを管理する"},
		"ko": {"CSV 파일을 파싱하는", "HTTP 요청을 재시도하는", "파일을 한 줄씩 읽는", "리스트에서 중복을 제거하는", "이메일 주소를 검증하는",
			"비싼 계산 결과를 캐시하는", "금액을 포맷하는", "레코드 목록을 정렬하는", "긴 텍스트를 줄바꿈하는", "평균을 계산하는",
			"JSON을 파싱하는", "리스너로 이벤트를 처리하는", "큐를 관리하는"},
		"ru": {"разбирает CSV-файл", "повторяет HTTP-запрос", "читает файл построчно", "удаляет дубликаты из списка", "проверяет email-адрес",
			"кэширует дорогие вычисления", "форматирует денежные суммы", "сортирует список записей", "переносит длинные строки текста",
			"считает среднее", "разбирает JSON", "обрабатывает события через слушатели", "управляет очередью"},
		"es": {"analiza un archivo CSV", "reintenta una petición HTTP", "lee un archivo línea por línea", "elimina duplicados de una lista",
			"valida una dirección de correo", "guarda en caché resultados costosos", "formatea importes de dinero", "ordena una lista de registros",
			"parte líneas de texto largas", "calcula una media", "analiza JSON", "gestiona eventos con listeners", "gestiona una cola"},
		"de": {"eine CSV-Datei parst", "eine HTTP-Anfrage wiederholt", "eine Datei zeilenweise liest", "Duplikate aus einer Liste entfernt",
			"eine E-Mail-Adresse prüft", "teure Ergebnisse cacht", "Geldbeträge formatiert", "eine Liste von Datensätzen sortiert",
			"lange Textzeilen umbricht", "einen Durchschnitt berechnet", "JSON parst", "Events mit Listenern behandelt", "eine Warteschlange verwaltet"},
		"fr": {"analyse un fichier CSV", "relance une requête HTTP", "lit un fichier ligne par ligne", "supprime les doublons d'une liste",
			"valide une adresse e-mail", "met en cache des résultats coûteux", "formate des montants", "trie une liste d'enregistrements",
			"coupe les longues lignes de texte", "calcule une moyenne", "analyse du JSON", "gère des événements avec des écouteurs", "gère une file d'attente"},
	}
}

// groundedTopics are the language's topics the code shows.
func groundedTopics(topics []topic, code string) []string {
	var out []string
	for _, t := range topics {
		if t.code.MatchString(code) {
			out = append(out, t.name)
		}
	}
	return out
}

// groundedTasks are the indexes of the tasks the code shows.
func groundedTasks(code string) []int {
	var out []int
	for i, re := range taskCode {
		if re.MatchString(code) {
			out = append(out, i)
		}
	}
	return out
}

func languageNames() map[string]string {
	return map[string]string{"go": "Go", "python": "Python", "javascript": "JavaScript", "typescript": "TypeScript", "java": "Java"}
}
