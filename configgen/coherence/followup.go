package coherence

import (
	"regexp"
	"strings"

	"dialogfarm/dialog/vocab"
)

// Needs is what a follow-up presupposes of the turn before it.
type Needs struct {
	// AnswerCode: the answer showed code ("can you also write tests for
	// your version?").
	AnswerCode bool `json:"answer_code,omitempty"`
	// Change: the answer changed existing code ("why is that better than
	// the original?").
	Change bool `json:"change,omitempty"`
}

// Or is the union of two sets of needs.
func (n Needs) Or(o Needs) Needs {
	return Needs{AnswerCode: n.AnswerCode || o.AnswerCode, Change: n.Change || o.Change}
}

// Turn is the turn a follow-up answers: its intent (an intent, or the
// follow-up kind it was written for) and the answer as the plugin showed
// it.
type Turn struct {
	Intent string
	Answer string
}

// HasCode reports whether the answer shows a fenced code block.
func (t Turn) HasCode() bool {
	return strings.Count(t.Answer, "```") >= 2 || strings.Count(t.Answer, "~~~") >= 2
}

// Changed reports whether the answer changed existing code: it shows code
// and was asked to change code.
func (t Turn) Changed() bool { return t.HasCode() && ChangesCode(t.Intent) }

// Met reports whether the turn gives what n presupposes.
func (t Turn) Met(n Needs) bool {
	return (!n.AnswerCode || t.HasCode()) && (!n.Change || t.Changed())
}

// ChangesCode reports whether a turn of this intent, or written for this
// follow-up kind, asks to change existing code.
func ChangesCode(intent string) bool {
	switch intent {
	case vocab.IntentFix, vocab.IntentOptimize, vocab.IntentRefactor, vocab.IntentDocs, "request_change", "simplify":
		return true
	}
	return false
}

// original: words that compare the answer with the code before it, in the
// locales dialogfarm writes.
var original = regexp.MustCompile(`(?i)\boriginal\w*|\b(old|previous|earlier|initial) (code|version)\b|\bbefore (your|the) changes?\b|` +
	`原来的|原来那|原先|原版|原代码|改之前|修改前|元の|変更前|원래|기존 코드|원본|исходн|оригинал|прежн\S* (код|верси)|` +
	`versión anterior|código anterior|ursprünglich|vorherige[n]? (Version|Code)|d'origine|version précédente|code initial`)

// yourCode: words that point at code the answer showed.
var yourCode = regexp.MustCompile(`(?i)\byour (code|version|function|snippet|fix|implementation|solution|change)s?\b|\bthe new (code|version|function)\b|` +
	`你的代码|你写的|你给的代码|新代码|改后的|あなたのコード|修正後の|작성한 코드|수정한 코드|твой код|ваш код|новый код|твою версию|` +
	`tu código|tu versión|el nuevo código|deine[mn]? (Code|Version)|neuen Code|ton code|votre code|ta version|nouveau code`)

// Presupposes reads off a follow-up's words what it presupposes: a
// comparison with the original needs a change, a reference to the code
// the answer gave needs code in it.
func Presupposes(text string) Needs {
	prose := vocab.Prose(text)
	return Needs{AnswerCode: yourCode.MatchString(prose), Change: original.MatchString(prose)}
}

// CheckFollowUp checks a follow-up against the turn it answers: declared
// (what its writer says it presupposes) and what its words presuppose
// must be met by prev.
func CheckFollowUp(prev Turn, text string, declared Needs) []Finding {
	n := declared.Or(Presupposes(text))
	var out []Finding
	if n.Change && !prev.Changed() {
		out = append(out, Finding{Rule: RuleFollowUp, Detail: "compares with the original, but the " + prev.Intent + " answer changed no code: " + text})
	} else if n.AnswerCode && !prev.HasCode() {
		out = append(out, Finding{Rule: RuleFollowUp, Detail: "refers to code in the " + prev.Intent + " answer, which showed none: " + text})
	}
	return out
}
