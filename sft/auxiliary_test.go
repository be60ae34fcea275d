package sft

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"dialogfarm/dialog"
)

// A plugin's auxiliary requests (title generation and the like), kept in
// the dialogue's auxiliary list, never become SFT records or turns.
func TestAuxiliaryNeverExported(t *testing.T) {
	export := func(ds []dialog.Dialogue) (string, Summary) {
		var in, out bytes.Buffer
		for _, d := range ds {
			_ = writeJSONLine(&in, d)
		}
		sum, err := Export(&in, &out, nil, Options{Format: FormatOpenAI, Meta: MetaInline, MinScore: 0, AllowOffline: true})
		if err != nil {
			t.Fatal(err)
		}
		return out.String(), sum
	}
	plain := fixture(t)
	_, want := export(plain)
	withAux := fixture(t)
	for i := range withAux {
		withAux[i].Auxiliary = []dialog.Exchange{{
			Session: withAux[i].Session, Seq: 99, Auxiliary: "title", Responder: "stand-in", Answer: "AUX-TITLE-ANSWER",
			Request: json.RawMessage(`{"model":"m","stream":false,"messages":[{"role":"system","content":"Write a title"},{"role":"user","content":"AUX-TITLE-REQUEST"}]}`),
		}}
	}
	got, sum := export(withAux)
	if strings.Contains(got, "AUX-TITLE") {
		t.Errorf("an auxiliary exchange reached the SFT output")
	}
	if sum.Records != want.Records || sum.Turns != want.Turns {
		t.Errorf("with auxiliary exchanges: %d records %d turns, without: %d records %d turns", sum.Records, sum.Turns, want.Records, want.Turns)
	}
}
