package judge_test

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"dialogfarm/adapter"
	"dialogfarm/dialog"
	"dialogfarm/judge"
)

// A rules-only judge scores two answers to a Chinese request for a fix
// sent by the reference plugin (read by its bundled adapter's format): the
// English one without code loses points for both.
func ExampleJudge_Judge() {
	j, err := judge.New(judge.DefaultConfig(), nil, zap.NewNop())
	if err != nil {
		panic(err)
	}
	req := dialog.ChatRequest{Messages: []dialog.Message{{Role: "user", Content: "File: a.go\nLanguage: go\n" +
		"Cursor: line 1, column 1\nSelected code (lines 1-1):\n```go\nx := a / b\n```\n\n修复这个除零错误"}}}
	ask, err := adapter.LoadForRecords(adapter.DefaultName)
	if err != nil {
		panic(err)
	}
	subject := judge.NewSubject(req, nil, adapter.Set{ask})
	verdicts, err := j.Judge(context.Background(), subject, []dialog.Candidate{
		{Member: "a", Text: "Check that b is not zero before dividing."},
		{Member: "b", Text: "先检查 b 是否为零：\n\n```go\nif b == 0 {\n\treturn 0, errDivByZero\n}\nx := a / b\n```"},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("intent:", subject.Intent, "locale:", subject.Locale)
	for _, v := range verdicts {
		fmt.Printf("candidate %d: score %.0f, rank %d\n", v.Candidate, v.Score, v.Rank)
		for _, d := range v.Deductions {
			fmt.Printf("  -%.0f %s\n", d.Weight, d.Rule)
		}
	}
	// Output:
	// intent: fix locale: zh
	// candidate 0: score 1, rank 2
	//   -2 locale_mismatch
	//   -2 missing_code_block
	// candidate 1: score 5, rank 1
}
