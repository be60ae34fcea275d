package configgen_test

import (
	"context"
	"fmt"

	"dialogfarm/configgen"
	"dialogfarm/dialog"
	"dialogfarm/redact"
)

// A driver asks for each follow-up after the plugin showed an answer.
// Without a model the writer uses the locale's template for the kind the
// config's policy names.
func ExampleFollowUpWriter() {
	w := configgen.NewFollowUpWriter(nil) // no model: templates
	// After an explanation that changed nothing, "explain_more" asks for
	// detail; it never asks why the answer beats "the original".
	cfg := dialog.ChatConfig{ID: "c1", Locale: "en", Intent: "explain", Turns: []dialog.TurnSpec{{Query: "/explain"}},
		FollowUp: &dialog.FollowUpPolicy{Kinds: []string{"explain_more"}}}
	history := []dialog.Turn{{Query: "/explain", Shown: "It sums the list."}}
	next, err := w.Next(context.Background(), cfg, history)
	fmt.Println(next, err)
	_, err = w.Next(context.Background(), cfg, append(history, dialog.Turn{Query: next}))
	fmt.Println(err)
	// Output:
	// Can you go into more detail on why that works? <nil>
	// configgen: the config asks for no further follow-up
}

func ExampleDetectSecrets() {
	src := "password = \"changeme\"\nDSN = \"postgres://app:s3cr3tPass@db/app\"\n"
	d, err := redact.NewDetector()
	if err != nil {
		panic(err)
	}
	for _, f := range configgen.DetectSecrets(d, []byte(src)) {
		fmt.Println(f.Line, f.Kind)
	}
	// Output: 2 dsn-password
}
