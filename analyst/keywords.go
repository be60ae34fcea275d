package analyst

import (
	"context"
	"regexp"
	"strings"

	"dialogfarm/dialog/vocab"
)

// KeywordClassifier is the fallback used when no model is configured: it
// labels intent by vocab.IntentOf, the keyword classifier the judge uses
// too, and difficulty by topic words and length. It is a rough guess, and every label it gives is
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

var (
	hardTopics = regexp.MustCompile(`(?i)\b(concurren\w*|race|thread\w*|deadlock|goroutines?|async\w*|mutex|lock-free|security|injection|memory leak|distributed|big-?o|complexity|overflow|cache invalidation)\b|并发|线程|死锁|内存泄漏|並行|スレッド|потокобезопас`)
	easyTopics = regexp.MustCompile(`(?i)\b(simple|basic|typo|rename|what is|hello world|beginner)\b|简单|基础|簡単`)
)

func keywordLabel(query string) Label {
	l := Label{Intent: vocab.IntentOf(query), Difficulty: vocab.DifficultyMedium, Source: SourceKeyword}
	style := QueryStyle(query)
	switch {
	case hardTopics.MatchString(query) || strings.HasPrefix(style, vocab.StyleVerbose):
		l.Difficulty = vocab.DifficultyHard
	case easyTopics.MatchString(query) || style == vocab.StyleTerse:
		l.Difficulty = vocab.DifficultyEasy
	}
	return l
}
