package pool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"dialogfarm/dialog"
)

// once makes one call within the member's timeout.
func (m *Member) once(ctx context.Context, creq openai.ChatCompletionRequest) (dialog.Candidate, error) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	defer cancel()
	start := time.Now()
	var (
		c   dialog.Candidate
		err error
	)
	if creq.Stream {
		c, err = m.stream(ctx, creq)
	} else {
		c, err = m.complete(ctx, creq)
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			err = fmt.Errorf("timed out after %v: %w", m.cfg.Timeout, err)
		}
		return c, err
	}
	c.Member, c.Seconds = m.cfg.Name, time.Since(start).Seconds()
	if c.Model == "" {
		c.Model = m.cfg.Model
	}
	if c.PromptTokens == 0 && c.CompletionTokens == 0 {
		msgs := make([]dialog.Message, 0, len(creq.Messages))
		for _, msg := range creq.Messages {
			msgs = append(msgs, dialog.Message{Role: msg.Role, Content: msg.Content})
		}
		c.PromptTokens, c.CompletionTokens, c.TokensCounted = countPrompt(msgs), CountTokens(c.Text), true
	}
	c.CostUSD = m.cfg.cost(c.PromptTokens, c.CompletionTokens)
	return c, nil
}

func (m *Member) complete(ctx context.Context, creq openai.ChatCompletionRequest) (dialog.Candidate, error) {
	resp, err := m.client.CreateChatCompletion(ctx, creq)
	if err != nil {
		return dialog.Candidate{}, err
	}
	if len(resp.Choices) == 0 {
		return dialog.Candidate{}, errors.New("the answer has no choices")
	}
	return dialog.Candidate{
		Model: resp.Model, Text: resp.Choices[0].Message.Content,
		PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens,
	}, nil
}

// stream reads an SSE answer. A stream that ends without a finish reason
// was cut off: ErrStreamDropped.
func (m *Member) stream(ctx context.Context, creq openai.ChatCompletionRequest) (dialog.Candidate, error) {
	s, err := m.client.CreateChatCompletionStream(ctx, creq)
	if err != nil {
		return dialog.Candidate{}, err
	}
	defer s.Close()
	var (
		c        dialog.Candidate
		text     strings.Builder
		finished bool
	)
	for {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				err = fmt.Errorf("%w: %w", ErrStreamDropped, err)
			}
			return dialog.Candidate{}, err
		}
		if chunk.Model != "" {
			c.Model = chunk.Model
		}
		if chunk.Usage != nil {
			c.PromptTokens, c.CompletionTokens = chunk.Usage.PromptTokens, chunk.Usage.CompletionTokens
		}
		if len(chunk.Choices) > 0 {
			text.WriteString(chunk.Choices[0].Delta.Content)
			if chunk.Choices[0].FinishReason != "" {
				finished = true
			}
		}
	}
	if !finished {
		return dialog.Candidate{}, ErrStreamDropped
	}
	c.Text = text.String()
	return c, nil
}
