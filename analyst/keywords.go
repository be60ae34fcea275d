package analyst

import (
	"context"
	"regexp"
	"strings"

	"dialogfarm/profiles"
)

// KeywordClassifier is the fallback used when no model is configured: it
// labels intent by the first matching keyword list (fix, tests, docs,
// optimize, refactor, generate, explain; else question) and difficulty by
// topic words and length. It is a rough guess, and every label it gives is
// marked SourceKeyword so a fitted profile says it was not model-classified.
type KeywordClassifier struct{}

// Classify labels each item by keywords.
func (KeywordClassifier) Classify(_ context.Context, items []Item) ([]Label, error) {
	out := make([]Label, len(items))
	for i, it := range items {
		out[i] = keywordLabel(it.Query)
	}
	return out, nil
}

var intentKeywords = []struct {
	intent string
	re     *regexp.Regexp
}{
	{profiles.IntentFix, regexp.MustCompile(`(?i)\b(fix|bug|error|crash\w*|broken|fails?|failing|exception|wrong|doesn'?t work|not working|panic\w*|traceback|undefined|null ?pointer)\b|修复|错误|报错|崩溃|バグ|エラー|修正して|ошибк|исправ|arregla|fehler|behebe|corrige|erreur`)},
	{profiles.IntentTests, regexp.MustCompile(`(?i)\b(unit ?tests?|tests?|pytest|junit|jest|mocha|test cases?|coverage)\b|测试|テスト|тест|prueba|testfall|tests unitaires`)},
	{profiles.IntentDocs, regexp.MustCompile(`(?i)\b(docstrings?|comments?|document\w*|jsdoc|javadoc|godoc|readme)\b|注释|文档|コメント|ドキュメント|комментар|документац|documenta|kommentar|dokumentation|commentaire`)},
	{profiles.IntentOptimize, regexp.MustCompile(`(?i)\b(optimi[sz]\w*|faster|slow\w*|langsam|lent|lento|performance|speed ?up|efficient\w*|memory usage|complexity)\b|优化|性能|最適化|高速|оптимиз|rendimiento|schneller|optimis`)},
	{profiles.IntentRefactor, regexp.MustCompile(`(?i)\b(refactor\w*|clean ?up|restructur\w*|rename|simplif\w*|extract|readab\w*|split .* into)\b|重构|リファクタ|рефактор|refactoriza|umstrukturier|refactoris`)},
	{profiles.IntentGenerate, regexp.MustCompile(`(?i)\b(write an?|create|implement|generate|add an? (new )?(function|method|class|endpoint)|make an?|build an?)\b|写一个|实现|生成|作成|実装|напиши|реализ|escribe|implementa|schreibe|implementiere|écris|implémente`)},
	{profiles.IntentExplain, regexp.MustCompile(`(?i)\b(explain\w*|what does|how does|why does|what is this|understand|meaning of|walk me through)\b|解释|什么意思|说明|説明|教えて|объясн|explica|erkläre|explique`)},
}

var (
	hardTopics = regexp.MustCompile(`(?i)\b(concurren\w*|race|thread\w*|deadlock|goroutines?|async\w*|mutex|lock-free|security|injection|memory leak|distributed|big-?o|complexity|overflow|cache invalidation)\b|并发|线程|死锁|内存泄漏|並行|スレッド|потокобезопас`)
	easyTopics = regexp.MustCompile(`(?i)\b(simple|basic|typo|rename|what is|hello world|beginner)\b|简单|基础|簡単`)
)

func keywordLabel(query string) Label {
	l := Label{Intent: profiles.IntentQuestion, Difficulty: profiles.DifficultyMedium, Source: SourceKeyword}
	if intent := slashIntent(query); intent != "" {
		l.Intent = intent
	} else {
		for _, k := range intentKeywords {
			if k.re.MatchString(query) {
				l.Intent = k.intent
				break
			}
		}
	}
	style := QueryStyle(query)
	switch {
	case hardTopics.MatchString(query) || strings.HasPrefix(style, profiles.StyleVerbose):
		l.Difficulty = profiles.DifficultyHard
	case easyTopics.MatchString(query) || style == profiles.StyleTerse:
		l.Difficulty = profiles.DifficultyEasy
	}
	return l
}
