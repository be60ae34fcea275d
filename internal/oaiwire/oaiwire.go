// Package oaiwire holds the OpenAI chat completion response shapes that
// dialogfarm writes: the capture endpoint's answers to the plugin and the
// test fake's answers to the pool. The shapes follow the wire exactly
// (finish_reason null until the end, an empty first content, a usage-only
// last chunk), which go-openai's own types, made for reading, do not.
package oaiwire

import "unicode"

// Usage is a response's token accounting.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Completion is a non-streamed chat.completion.
type Completion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []CompletionChoice `json:"choices"`
	Usage   Usage              `json:"usage"`
}

// CompletionChoice is one choice of a Completion.
type CompletionChoice struct {
	Index        int     `json:"index"`
	Message      Message `json:"message"`
	FinishReason string  `json:"finish_reason"`
}

// Message is an answer's message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// NewCompletion is the assistant's answer text as one chat.completion.
func NewCompletion(id string, created int64, model, text string, u Usage) Completion {
	return Completion{ID: id, Object: "chat.completion", Created: created, Model: model, Usage: u,
		Choices: []CompletionChoice{{Message: Message{Role: "assistant", Content: text}, FinishReason: "stop"}}}
}

// Chunk is one chat.completion.chunk of a streamed answer.
type Chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []ChunkChoice `json:"choices"`
	Usage   *Usage        `json:"usage,omitempty"`
}

// ChunkChoice is the one choice of a Chunk.
type ChunkChoice struct {
	Index        int     `json:"index"`
	Delta        Delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

// Delta is what a Chunk adds to the answer.
type Delta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

// StreamChunks are the chunks of a streamed answer made of pieces: the
// role with empty content, one chunk per piece, the finish reason "stop",
// and, when u is not nil, a last chunk with no choices and the usage. The
// "data: [DONE]" frame that ends the stream is the writer's.
func StreamChunks(id string, created int64, model string, pieces []string, u *Usage) []Chunk {
	base := Chunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: model}
	with := func(c ChunkChoice) Chunk { b := base; b.Choices = []ChunkChoice{c}; return b }
	empty, stop := "", "stop"
	out := []Chunk{with(ChunkChoice{Delta: Delta{Role: "assistant", Content: &empty}})}
	for _, p := range pieces {
		out = append(out, with(ChunkChoice{Delta: Delta{Content: &p}}))
	}
	out = append(out, with(ChunkChoice{FinishReason: &stop}))
	if u != nil {
		last := base
		last.Choices = []ChunkChoice{}
		last.Usage = u
		out = append(out, last)
	}
	return out
}

// Words cuts text after each run of whitespace: one word with the
// whitespace after it per piece. The pieces concatenate to text; streams
// send them as content deltas.
func Words(text string) []string {
	var out []string
	start, inSpace := 0, false
	for i, r := range text {
		space := unicode.IsSpace(r)
		if inSpace && !space {
			out = append(out, text[start:i])
			start = i
		}
		inSpace = space
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}
