package vocab

import (
	"regexp"
	"strings"
)

// intentRules are checked in order; the first whose words the query holds
// decides its intent. Tests come twice: a request for tests first (so
// "write tests for this bug" is tests), any other mention of tests after
// the fixes, docs and rewrites (so "fix the test" is fix).
var intentRules = []struct {
	intent string
	re     *regexp.Regexp
}{
	{IntentTests, regexp.MustCompile(`(?i)\b(unit[ -]?tests?|test ?cases?|tests? for|table[ -]driven tests?|test coverage|` +
		`(write|add|create|generate|need|want) (some |more |a |an |the )?(unit )?tests?)\b|` +
		`单元测试|测试用例|写.{0,8}测试|加.{0,4}测试|补.{0,4}测试|生成.{0,4}测试|테스트(를)? (작성|추가)|단위 테스트|` +
		`テストを(書|追加|作)|テストケース|ユニットテスト|単体テスト|` +
		`(напиши|добавь|создай) (юнит-?)?тест|юнит-?тест|модульн\S* тест|` +
		`(escribe|añade|agrega|crea|genera) (unas |algunas )?pruebas|pruebas unitarias|casos de prueba|` +
		`(schreib\S*|erstelle|füge) .{0,20}tests?\b|testfälle|` +
		`(écris|ajoute|crée|génère) .{0,20}tests?\b|tests? unitaires|cas de test`)},
	{IntentFix, regexp.MustCompile(`(?i)\b(fix\w*|bugs?|errors?|crash\w*|broken|fails?|failing|failed|exception|wrong|` +
		`doesn'?t work|not working|panic\w*|traceback|undefined|null ?pointer|debug\w*|repair|incorrect\w*|falsch)\b|` +
		`修复|修正|修一下|修好|错误|报错|崩溃|失败|出错|有问题|什么问题|出问题|不工作|` +
		`バグ|エラー|修正して|直して|動かない|` +
		`ошибк|исправ|не работает|падает|` +
		`arregla|corrige|falla|no funciona|` +
		`fehler|behebe|repariere|funktioniert nicht|stürzt|` +
		`erreur|plante|ne marche pas|ne fonctionne pas|` +
		`버그|오류|에러|고쳐|수정해`)},
	{IntentDocs, regexp.MustCompile(`(?i)\b(docstrings?|doc ?comments?|document\w*|jsdoc|javadoc|godoc|readme|add docs?|commenting|` +
		`(add|write|with|more|inline|code|better|clear|some|missing) comments?|comments? (to|for|in|on)|comment (this|the|it|every|each))\b|` +
		`注释|文档|コメント|ドキュメント|комментар|документ|documenta|comentario|kommentar|dokumentation|dokumentiere|commentaire|주석|문서`)},
	{IntentOptimize, regexp.MustCompile(`(?i)\b(optimi[sz]\w*|faster|slow\w*|performance|speed ?up|efficient\w*|memory usage|complexity|` +
		`langsam|lente?|lento|rendimiento|schneller|effizient\w*|eficiente|efficace)\b|` +
		`优化|性能|更快|慢|高效|效率|最適化|高速|遅い|速く|効率|оптимиз|быстрее|медленн|ускор|эффективн|` +
		`más rápido|optimiza|optimier|plus rapide|optimis|최적화|빠르게|느려|효율`)},
	{IntentRefactor, regexp.MustCompile(`(?i)\b(refactor\w*|clean ?up|restructur\w*|rename|simplif\w*|extract|readab\w*|split .* into|` +
		`maintainab\w*|mantenible|wartbar|maintenable)\b|` +
		`好维护|可维护|维护性|保守しやすく|構成する|유지보수|структурир|легко поддерживать|` +
		`重构|简化|重命名|リファクタ|簡潔に|рефактор|упрост|refactoriza|simplifica|reestructura|umstrukturier|refaktor|vereinfach|refactoris|리팩터|리팩토링`)},
	{IntentTests, regexp.MustCompile(`(?i)\b(tests?|testing|pytest|junit|jest|mocha|coverage)\b|测试|テスト|тест|prueba|testfall|테스트`)},
	{IntentExplain, regexp.MustCompile(`(?i)\b(explain\w*|what does|how does|why does|why is|what is this|what's this|understand|` +
		`meaning of|walk me through)\b|` +
		`解释|什么意思|做什么|干什么|是什么|怎么工作|为什么|说明|讲讲|` +
		`説明|教えて|どういう|なぜ|何をし|` +
		`объясн|что делает|почему|как работает|` +
		`explica|qué hace|por qué|cómo funciona|` +
		`erklär|was macht|warum|wie funktioniert|` +
		`explique|que fait|pourquoi|comment fonctionne|` +
		`설명|무엇을|뭐 하는|뭘 하|어떻게 동작|왜`)},
	{IntentGenerate, regexp.MustCompile(`(?i)\b(write|implement\w*|generate|create|add an? (new )?(function|method|class|endpoint|helper)|` +
		`make an?|build an?)\b|` +
		`写一个|写个|实现|生成|编写|添加|新增|作成|実装|書いて|作って|напиши|реализ|создай|` +
		`escribe|implementa|crea|genera|schreib|implementiere|erstelle|écris|implémente|crée|génère|작성해|만들어|구현`)},
}

// topics are phrases that name errors or tests without reporting or
// asking for them ("how does error wrapping work?"); they are read past.
var topics = regexp.MustCompile(`(?i)\berror (handling|wrapping|types?|values?)\b|\berrors (package|as values)\b`)

// IntentOf reads an intent off a query's words: the intent of a leading
// slash command ("/tests", "/doc"), else that of the first keyword rule
// the query matches, else question. It is a rough guess where nothing
// better is known (no model labelled the query, no config says it).
func IntentOf(query string) string {
	q := strings.TrimSpace(query)
	if strings.HasPrefix(q, "/") {
		word, _, _ := strings.Cut(q, " ")
		word, _, _ = strings.Cut(word, "\n")
		if intent := Intent(word); intent != "" {
			return intent
		}
	}
	q = topics.ReplaceAllString(q, " ")
	for _, r := range intentRules {
		if r.re.MatchString(q) {
			return r.intent
		}
	}
	return IntentQuestion
}
