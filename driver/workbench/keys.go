package workbench

import (
	"fmt"
	"strings"

	"dialogfarm/adapter"
	"dialogfarm/driver/browser"
)

// key is a key of a US keyboard, named by its DOM code ("ControlLeft",
// "KeyK", "Enter"). The driver's steps press keys by these names whichever
// browser backend sends the events.
type key string

// The keys the driver's own steps press; adapters may name any key of
// keyDefs.
const (
	keyControl   key = "ControlLeft"
	keyShift     key = "ShiftLeft"
	keyAlt       key = "AltLeft"
	keyMeta      key = "MetaLeft"
	keyEnter     key = "Enter"
	keyEscape    key = "Escape"
	keyHome      key = "Home"
	keyEnd       key = "End"
	keyArrowDown key = "ArrowDown"
	keyPageUp    key = "PageUp"
	keyPageDown  key = "PageDown"
	keyArrowUp   key = "ArrowUp"
	keyArrowLeft key = "ArrowLeft"
	keyF1        key = "F1"
	keyE         key = "KeyE"
	keyG         key = "KeyG"
	keyK         key = "KeyK"
	keyP         key = "KeyP"
	keyW         key = "KeyW"
)

// keyDef is what a key event says about a key: KeyboardEvent.key, the
// Windows virtual key code, the location (1 for the left modifier keys),
// the text a press types (empty for keys that type nothing) and the
// modifier bit it sets while held.
type keyDef struct {
	key      string
	keyCode  int
	location int
	text     string
	modifier int
}

// Modifier bits of the DevTools protocol's Input domain.
const (
	modAlt     = 1
	modControl = 2
	modMeta    = 4
	modShift   = 8
)

// keyDefs are the keys that can be pressed.
var keyDefs = func() map[key]keyDef {
	m := map[key]keyDef{
		keyControl:   {key: "Control", keyCode: 17, location: 1, modifier: modControl},
		keyShift:     {key: "Shift", keyCode: 16, location: 1, modifier: modShift},
		keyAlt:       {key: "Alt", keyCode: 18, location: 1, modifier: modAlt},
		keyMeta:      {key: "Meta", keyCode: 91, location: 1, modifier: modMeta},
		keyEnter:     {key: "Enter", keyCode: 13, text: "\r"},
		keyEscape:    {key: "Escape", keyCode: 27},
		"Tab":        {key: "Tab", keyCode: 9},
		"Space":      {key: " ", keyCode: 32, text: " "},
		"Backspace":  {key: "Backspace", keyCode: 8},
		"Delete":     {key: "Delete", keyCode: 46},
		keyArrowUp:   {key: "ArrowUp", keyCode: 38},
		keyArrowDown: {key: "ArrowDown", keyCode: 40},
		keyArrowLeft: {key: "ArrowLeft", keyCode: 37},
		"ArrowRight": {key: "ArrowRight", keyCode: 39},
		keyHome:      {key: "Home", keyCode: 36},
		keyEnd:       {key: "End", keyCode: 35},
		keyPageUp:    {key: "PageUp", keyCode: 33},
		keyPageDown:  {key: "PageDown", keyCode: 34},
		"Slash":      {key: "/", keyCode: 191, text: "/"},
		"Period":     {key: ".", keyCode: 190, text: "."},
		"Comma":      {key: ",", keyCode: 188, text: ","},
		"Semicolon":  {key: ";", keyCode: 186, text: ";"},
		"Backquote":  {key: "`", keyCode: 192, text: "`"},
	}
	for i := 1; i <= 12; i++ {
		name := fmt.Sprintf("F%d", i)
		m[key(name)] = keyDef{key: name, keyCode: 111 + i}
	}
	for c := 'a'; c <= 'z'; c++ {
		m[key("Key"+strings.ToUpper(string(c)))] = keyDef{key: string(c), keyCode: int(c - 'a' + 'A'), text: string(c)}
	}
	for d := '0'; d <= '9'; d++ {
		m[key("Digit"+string(d))] = keyDef{key: string(d), keyCode: int(d), text: string(d)}
	}
	return m
}()

// keyboard turns key presses into key events, tracking which modifiers
// are held as a person's keyboard would.
type keyboard struct {
	held   []key
	events []browser.KeyEvent
}

func (kb *keyboard) modifiers() int {
	m := 0
	for _, k := range kb.held {
		m |= keyDefs[k].modifier
	}
	return m
}

func (kb *keyboard) down(k key) {
	kb.held = append(kb.held, k)
	d := keyDefs[k]
	typ := "rawKeyDown"
	if d.text != "" {
		typ = "keyDown"
	}
	kb.events = append(kb.events, browser.KeyEvent{Type: typ, Modifiers: kb.modifiers(), Key: d.key, Code: string(k), Text: d.text, KeyCode: d.keyCode, Location: d.location})
}

func (kb *keyboard) up(k key) {
	for i := len(kb.held) - 1; i >= 0; i-- {
		if kb.held[i] == k {
			kb.held = append(kb.held[:i], kb.held[i+1:]...)
			break
		}
	}
	d := keyDefs[k]
	kb.events = append(kb.events, browser.KeyEvent{Type: "keyUp", Modifiers: kb.modifiers(), Key: d.key, Code: string(k), KeyCode: d.keyCode, Location: d.location})
}

// releaseAll lets go of the held keys, the last pressed first.
func (kb *keyboard) releaseAll() {
	for len(kb.held) > 0 {
		kb.up(kb.held[len(kb.held)-1])
	}
}

// chordEvents are the events of a key combination: every key but the last
// is held while the last is typed, then released.
func chordEvents(keys []key) ([]browser.KeyEvent, error) {
	return repeatEvents(1, keys[len(keys)-1], keys[:len(keys)-1])
}

// repeatEvents are the events of typing k n times while mods are held.
func repeatEvents(n int, k key, mods []key) ([]browser.KeyEvent, error) {
	for _, m := range append(append([]key(nil), mods...), k) {
		if _, ok := keyDefs[m]; !ok {
			return nil, fmt.Errorf("key %s cannot be pressed", m)
		}
	}
	var kb keyboard
	for _, m := range mods {
		kb.down(m)
	}
	for range n {
		kb.down(k)
		kb.up(k)
	}
	kb.releaseAll()
	return kb.events, nil
}

// parseKeys turns an adapter keybinding ("ctrl+enter") into keys.
func parseKeys(s string) ([]key, error) {
	codes, err := adapter.ParseKeys(s)
	if err != nil {
		return nil, err
	}
	out := make([]key, len(codes))
	for i, c := range codes {
		if _, ok := keyDefs[key(c)]; !ok {
			return nil, fmt.Errorf("keybinding %q: key %s cannot be pressed", s, c)
		}
		out[i] = key(c)
	}
	return out, nil
}

func keyNames(keys []key) string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = string(k)
	}
	return strings.Join(names, "+")
}
