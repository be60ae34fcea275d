package adapter

import (
	"fmt"
	"strings"
)

// ParseKeys reads a keybinding as VS Code writes it ("ctrl+alt+e",
// "ctrl+enter", "f1") into DOM key codes ("ControlLeft", "AltLeft",
// "KeyE"): the modifiers in the order given, then the one key.
func ParseKeys(s string) ([]string, error) {
	parts := strings.Split(strings.ToLower(strings.TrimSpace(s)), "+")
	var out []string
	for i, p := range parts {
		p = strings.TrimSpace(p)
		last := i == len(parts)-1
		if code, ok := modifiers[p]; ok && !last {
			out = append(out, code)
			continue
		}
		if !last {
			return nil, fmt.Errorf("keybinding %q: %q is not a modifier (ctrl, alt, shift, meta)", s, p)
		}
		code, ok := keyCode(p)
		if !ok {
			return nil, fmt.Errorf("keybinding %q: unknown key %q", s, p)
		}
		out = append(out, code)
	}
	return out, nil
}

var modifiers = map[string]string{
	"ctrl": "ControlLeft", "control": "ControlLeft", "alt": "AltLeft", "option": "AltLeft",
	"shift": "ShiftLeft", "meta": "MetaLeft", "cmd": "MetaLeft", "win": "MetaLeft",
}

var named = map[string]string{
	"enter": "Enter", "return": "Enter", "escape": "Escape", "esc": "Escape", "tab": "Tab",
	"space": "Space", "backspace": "Backspace", "delete": "Delete", "up": "ArrowUp", "down": "ArrowDown",
	"left": "ArrowLeft", "right": "ArrowRight", "home": "Home", "end": "End", "pageup": "PageUp",
	"pagedown": "PageDown", "/": "Slash", ".": "Period", ",": "Comma", ";": "Semicolon", "`": "Backquote",
}

func keyCode(p string) (string, bool) {
	if c, ok := named[p]; ok {
		return c, true
	}
	if len(p) == 1 && p[0] >= 'a' && p[0] <= 'z' {
		return "Key" + strings.ToUpper(p), true
	}
	if len(p) == 1 && p[0] >= '0' && p[0] <= '9' {
		return "Digit" + p, true
	}
	if len(p) >= 2 && p[0] == 'f' {
		var n int
		if _, err := fmt.Sscanf(p[1:], "%d", &n); err == nil && n >= 1 && n <= 12 && fmt.Sprint(n) == p[1:] {
			return "F" + p[1:], true
		}
	}
	return "", false
}
