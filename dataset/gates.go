package dataset

import (
	"fmt"
	"strings"
	"sync"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"

	"dialogfarm/dialog"
)

// Reasons a record is dropped at export, as counted in Stats.Dropped.
const (
	DropUnknownRole   = "unknown_role"    // a role other than system, user, assistant (e.g. "developer")
	DropRoleOrder     = "role_order"      // a second or late system message, or user/assistant not alternating
	DropEmptyTurn     = "empty_turn"      // a message with empty or blank content
	DropTooLong       = "too_long"        // more tokens than Options.MaxTokens
	DropExactDup      = "exact_duplicate" // same user and assistant text as a record with a smaller id
	DropNearDuplicate = "near_duplicate"  // estimated Jaccard similarity at or above Options.Dedup.Near
)

// DropReasons lists every drop reason in gate order.
var DropReasons = []string{DropUnknownRole, DropRoleOrder, DropEmptyTurn, DropTooLong, DropExactDup, DropNearDuplicate}

// checkShape returns why msgs is not a conversation every consumer reads,
// or "": an optional system message first, then user and assistant
// strictly alternating, starting with user and ending with assistant, and
// no blank content.
func checkShape(msgs []dialog.Message) string {
	conv := msgs
	for _, m := range msgs {
		switch m.Role {
		case "system", "user", "assistant":
		default:
			return DropUnknownRole
		}
	}
	if len(conv) > 0 && conv[0].Role == "system" {
		conv = conv[1:]
	}
	if len(conv) < 2 || len(conv)%2 != 0 {
		return DropRoleOrder
	}
	for i, m := range conv {
		want := "user"
		if i%2 == 1 {
			want = "assistant"
		}
		if m.Role != want {
			return DropRoleOrder
		}
	}
	for _, m := range msgs {
		if strings.TrimSpace(m.Content) == "" {
			return DropEmptyTurn
		}
	}
	return ""
}

// Encodings the token counter knows; all are embedded in the binary, so
// counting needs no network.
var Encodings = []string{"o200k_base", "cl100k_base"}

// loaded holds each encoding once it is built (building one takes a
// noticeable fraction of a second); encodings are read-only after that.
var loaded = struct {
	sync.Mutex
	byName map[string]*Tokenizer
}{byName: map[string]*Tokenizer{}}

// Tokenizer counts tokens with a tiktoken BPE encoding loaded from the
// files embedded by tiktoken-go-loader.
type Tokenizer struct {
	name string
	enc  *tiktoken.Tiktoken
}

// NewTokenizer loads the encoding name (one of Encodings).
func NewTokenizer(name string) (*Tokenizer, error) {
	ok := false
	for _, e := range Encodings {
		ok = ok || e == name
	}
	if !ok {
		return nil, fmt.Errorf("tokenizer %q: want one of %s", name, strings.Join(Encodings, ", "))
	}
	loaded.Lock()
	defer loaded.Unlock()
	if t, ok := loaded.byName[name]; ok {
		return t, nil
	}
	// tiktoken-go fetches BPE files over HTTP unless another loader is
	// set; the offline loader reads the copies embedded in the binary.
	tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding(name)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer %s: %w", name, err)
	}
	t := &Tokenizer{name: name, enc: enc}
	loaded.byName[name] = t
	return t, nil
}

// Name is the encoding's name.
func (t *Tokenizer) Name() string { return t.name }

// Count is the number of tokens of s; special-token text such as
// "<|endoftext|>" counts as ordinary text, as it is in training data.
func (t *Tokenizer) Count(s string) int { return len(t.enc.EncodeOrdinary(s)) }

// CountMessages counts a chat example the way OpenAI's cookbook does
// ("How to count tokens with tiktoken", num_tokens_from_messages): 3 tokens
// per message plus its role and content, and 3 that prime the reply.
func (t *Tokenizer) CountMessages(msgs []dialog.Message) int {
	n := 3
	for _, m := range msgs {
		n += 3 + t.Count(m.Role) + t.Count(m.Content)
	}
	return n
}
