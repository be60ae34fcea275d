package dialog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Message is one chat message of an OpenAI-compatible request, as the plugin
// sent it. Content given as an array of parts is the concatenation of its
// text parts.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// ChatRequest is the part of an OpenAI chat completion request body that
// dialogfarm reads: the model asked for, the messages, and how the answer
// is wanted.
type ChatRequest struct {
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	Stream      bool      `json:"stream,omitempty"`
	Temperature *float32  `json:"temperature,omitempty"`
	// IncludeUsage is stream_options.include_usage: a streamed answer
	// ends with a usage chunk.
	IncludeUsage bool `json:"-"`
}

// ParseChatRequest decodes a captured request body (Exchange.Request).
func ParseChatRequest(body []byte) (ChatRequest, error) {
	var in struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Stream        bool     `json:"stream"`
		Temperature   *float32 `json:"temperature"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return ChatRequest{}, fmt.Errorf("parse chat request: %w", err)
	}
	out := ChatRequest{Model: in.Model, Messages: make([]Message, 0, len(in.Messages)), Stream: in.Stream,
		Temperature: in.Temperature, IncludeUsage: in.StreamOptions != nil && in.StreamOptions.IncludeUsage}
	for i, m := range in.Messages {
		text, err := contentText(m.Content)
		if err != nil {
			return ChatRequest{}, fmt.Errorf("parse chat request: message %d: %w", i, err)
		}
		out.Messages = append(out.Messages, Message{Role: m.Role, Content: text})
	}
	return out, nil
}

// LastUser is the content of the request's last user message, or "".
func (r ChatRequest) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// contentText is a message content given as a string, null or an array of
// {type, text} parts.
func contentText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content is neither a string nor an array of parts: %w", err)
	}
	var sb strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			sb.WriteString(p.Text)
		}
	}
	return sb.String(), nil
}

// UserMessage is a chat turn's user message as its plugin's adapter reads
// it (the adapter's prompt: section): the part the developer asked for,
// apart from the editor context the plugin added, and their own words apart
// from a command template.
type UserMessage struct {
	// Instruction is the message without its editor context: a command
	// template, the developer's own words, or both.
	Instruction string
	// Query is the developer's own words: Instruction without its
	// template; "" for a template sent alone.
	Query string
	// Intent is the template's intent, as the behaviour profile spells it
	// ("explain", "tests", "optimize"); "" when no template was sent.
	Intent string
	// Language is the language id the message names ("go"), "" if none.
	Language string
}
