package adapter

import (
	"fmt"
	"regexp"
)

// Request is what the traffic rules look at.
type Request struct {
	Path   string
	Stream bool
	System string // the first system message
	User   string // the last user message
	// Position is the request's 1-based place among the requests since
	// the session's last chat request (1: no chat request before it).
	Position int
}

// Classifier tells chat turns from auxiliary requests by the adapter's
// rules. The zero Classifier calls everything a chat turn.
type Classifier struct {
	rules []compiledRule
}

type compiledRule struct {
	Rule
	path, system, user *regexp.Regexp
}

// Classifier compiles the adapter's traffic rules (Parse checked them).
func (a *Adapter) Classifier() Classifier {
	var c Classifier
	for i, r := range a.Traffic.Auxiliary {
		if r.Name == "" {
			r.Name = fmt.Sprintf("rule %d", i+1)
		}
		cr := compiledRule{Rule: r}
		cr.path, cr.system, cr.user = compileChecked(r.Path), compileChecked(r.System), compileChecked(r.User)
		c.rules = append(c.rules, cr)
	}
	return c
}

// compileChecked compiles a regular expression Parse checked; nil for "".
func compileChecked(s string) *regexp.Regexp {
	if s == "" {
		return nil
	}
	return regexp.MustCompile(s)
}

// Auxiliary returns the name of the first rule the request matches, or ""
// for a chat turn.
func (c Classifier) Auxiliary(r Request) string {
	for _, rule := range c.rules {
		if rule.matches(r) {
			return rule.Name
		}
	}
	return ""
}

func (r compiledRule) matches(req Request) bool {
	switch {
	case r.path != nil && !r.path.MatchString(req.Path):
		return false
	case r.Stream != nil && *r.Stream != req.Stream:
		return false
	case r.system != nil && !r.system.MatchString(req.System):
		return false
	case r.user != nil && !r.user.MatchString(req.User):
		return false
	case r.Position != 0 && r.Position != req.Position:
		return false
	}
	return true
}

// Classify combines the traffic rules of every adapter of a run: a request
// is auxiliary when any adapter's rule matches it. Nil when no adapter has
// rules.
func Classify(adapters []*Adapter) func(Request) string {
	var cs []Classifier
	for _, a := range adapters {
		if len(a.Traffic.Auxiliary) > 0 {
			cs = append(cs, a.Classifier())
		}
	}
	if len(cs) == 0 {
		return nil
	}
	return func(r Request) string {
		for _, c := range cs {
			if name := c.Auxiliary(r); name != "" {
				return name
			}
		}
		return ""
	}
}
