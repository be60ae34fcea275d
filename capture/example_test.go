package capture_test

import (
	"context"
	"fmt"

	openai "github.com/sashabaranov/go-openai"
	"go.uber.org/zap"

	"dialogfarm/capture"
)

// A driver starts one endpoint, points a plugin at BaseURL(session), makes
// the plugin ask, and waits for the exchange with Next.
func ExampleListen() {
	ctx := context.Background()
	srv, err := capture.Listen(ctx, capture.DefaultConfig(), capture.Offline{}, nil, zap.NewNop())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Shutdown(ctx)

	// Stands in for the plugin in the editor.
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = srv.BaseURL("sim-1")
	_, err = openai.NewClientWithConfig(cfg).CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model:    "any",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "What does this do?"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	ex, err := srv.Next(ctx, "sim-1")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ex.Session, ex.Seq, ex.Responder, ex.Offline)
	fmt.Println(string(ex.Request))
	// Output:
	// sim-1 1 offline true
	// {"model":"any","messages":[{"role":"user","content":"What does this do?"}],"stream":false}
}

func ExampleOffline() {
	user := "File: app/calc.py\nLanguage: python\nCursor: line 4, column 1\n" +
		"Selected code (lines 3-4):\n```python\ndef add(a, b):\n    return a + b\n```\n\n" +
		"Explain what the selected code does."
	ans, _ := capture.Offline{}.Respond(context.Background(), capture.Request{
		Messages: []capture.Message{{Role: "user", Content: user}},
	})
	fmt.Print(ans.Text)
	// Output:
	// [offline placeholder] No model service is configured, so dialogfarm's offline stand-in wrote this answer. It is not a real answer and is never training data.
	//
	// Request: Explain what the selected code does.
	// File: app/calc.py (python)
	// Turn: 1
	//
	// ```python
	// # offline placeholder for app/calc.py, lines 3-4
	// # first line: def add(a, b):
	// ```
}
