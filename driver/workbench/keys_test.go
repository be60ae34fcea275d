package workbench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"dialogfarm/driver/browser"
)

// TestChordEvents: a combination holds its modifiers (each press and
// release carrying the modifier bits still held) around the typed key,
// printable keys type text and the others are raw key downs.
func TestChordEvents(t *testing.T) {
	for name, tc := range map[string]struct {
		keys []key
		want []browser.KeyEvent
	}{
		"ctrl+k": {keys: []key{keyControl, keyK}, want: []browser.KeyEvent{
			{Type: "rawKeyDown", Modifiers: modControl, Key: "Control", Code: "ControlLeft", KeyCode: 17, Location: 1},
			{Type: "keyDown", Modifiers: modControl, Key: "k", Code: "KeyK", Text: "k", KeyCode: 75},
			{Type: "keyUp", Modifiers: modControl, Key: "k", Code: "KeyK", KeyCode: 75},
			{Type: "keyUp", Key: "Control", Code: "ControlLeft", KeyCode: 17, Location: 1},
		}},
		"ctrl+shift+e": {keys: []key{keyControl, keyShift, keyE}, want: []browser.KeyEvent{
			{Type: "rawKeyDown", Modifiers: modControl, Key: "Control", Code: "ControlLeft", KeyCode: 17, Location: 1},
			{Type: "rawKeyDown", Modifiers: modControl | modShift, Key: "Shift", Code: "ShiftLeft", KeyCode: 16, Location: 1},
			{Type: "keyDown", Modifiers: modControl | modShift, Key: "e", Code: "KeyE", Text: "e", KeyCode: 69},
			{Type: "keyUp", Modifiers: modControl | modShift, Key: "e", Code: "KeyE", KeyCode: 69},
			{Type: "keyUp", Modifiers: modControl, Key: "Shift", Code: "ShiftLeft", KeyCode: 16, Location: 1},
			{Type: "keyUp", Key: "Control", Code: "ControlLeft", KeyCode: 17, Location: 1},
		}},
		"enter types a carriage return": {keys: []key{keyEnter}, want: []browser.KeyEvent{
			{Type: "keyDown", Key: "Enter", Code: "Enter", Text: "\r", KeyCode: 13},
			{Type: "keyUp", Key: "Enter", Code: "Enter", KeyCode: 13},
		}},
		"f1 types nothing": {keys: []key{keyF1}, want: []browser.KeyEvent{
			{Type: "rawKeyDown", Key: "F1", Code: "F1", KeyCode: 112},
			{Type: "keyUp", Key: "F1", Code: "F1", KeyCode: 112},
		}},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := chordEvents(tc.keys)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
		})
	}
}

// TestRepeatEvents: shift stays held over every repetition and is
// released once at the end.
func TestRepeatEvents(t *testing.T) {
	got, err := repeatEvents(3, keyArrowDown, []key{keyShift})
	if err != nil {
		t.Fatal(err)
	}
	var seq []string
	for _, e := range got {
		seq = append(seq, e.Type+" "+e.Code)
		if e.Code == "ArrowDown" && e.Modifiers != modShift {
			t.Errorf("%s %s without shift held (modifiers %d)", e.Type, e.Code, e.Modifiers)
		}
	}
	want := "rawKeyDown ShiftLeft, rawKeyDown ArrowDown, keyUp ArrowDown, rawKeyDown ArrowDown, keyUp ArrowDown, " +
		"rawKeyDown ArrowDown, keyUp ArrowDown, keyUp ShiftLeft"
	if s := strings.Join(seq, ", "); s != want {
		t.Errorf("events: %s\nwant:   %s", s, want)
	}
}

// TestParseKeys: an adapter's keybinding maps onto pressable keys, and a
// key the keyboard table lacks is refused by name.
func TestParseKeys(t *testing.T) {
	for in, want := range map[string][]key{
		"ctrl+enter":       {keyControl, keyEnter},
		"Ctrl+Shift+/":     {keyControl, keyShift, "Slash"},
		"alt+f12":          {keyAlt, "F12"},
		"meta+9":           {keyMeta, "Digit9"},
		"shift+pagedown":   {keyShift, "PageDown"},
		"ctrl+alt+space":   {keyControl, keyAlt, "Space"},
		"cmd+`":            {keyMeta, "Backquote"},
		"ctrl+shift+right": {keyControl, keyShift, "ArrowRight"},
	} {
		got, err := parseKeys(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", in, d)
		}
	}
	// Every key an adapter may name can be pressed.
	names := strings.Fields("enter return escape esc tab space backspace delete up down left right home end pageup pagedown / . , ; `")
	for c := 'a'; c <= 'z'; c++ {
		names = append(names, string(c))
	}
	for i := range 10 {
		names = append(names, fmt.Sprint(i), fmt.Sprintf("f%d", i+1))
	}
	names = append(names, "f11", "f12")
	for _, n := range names {
		if _, err := parseKeys("ctrl+alt+shift+meta+" + n); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	if _, err := chordEvents([]key{keyControl, "NumpadEnter"}); err == nil || !strings.Contains(err.Error(), "NumpadEnter") {
		t.Errorf("unknown key: %v", err)
	}
}
