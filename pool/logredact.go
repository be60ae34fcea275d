package pool

import (
	"fmt"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// RedactLogs wraps a logger's core so that the given keys are cut out of
// every message and field it writes: a second line of defence behind the
// members' own redaction, for log lines written outside the gateway.
// String, error and stringer fields are rewritten (an error becomes its
// cut text); other fields are kept as they are.
func RedactLogs(core zapcore.Core, keys ...Secret) zapcore.Core {
	s := newScrubber(keys...)
	if len(s) == 0 {
		return core
	}
	return &redactingCore{Core: core, s: s}
}

type redactingCore struct {
	zapcore.Core
	s scrubber
}

func (c *redactingCore) With(fields []zapcore.Field) zapcore.Core {
	return &redactingCore{Core: c.Core.With(c.fields(fields)), s: c.s}
}

func (c *redactingCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *redactingCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	e.Message = c.s.text(e.Message)
	return c.Core.Write(e, c.fields(fields))
}

// fields returns fields with the keys cut from their text.
func (c *redactingCore) fields(fields []zapcore.Field) []zapcore.Field {
	out := make([]zapcore.Field, len(fields))
	for i, f := range fields {
		switch f.Type {
		case zapcore.StringType:
			f.String = c.s.text(f.String)
		case zapcore.ErrorType:
			if err, ok := f.Interface.(error); ok && err != nil {
				f = zap.String(f.Key, c.s.text(err.Error()))
			}
		case zapcore.StringerType:
			if st, ok := f.Interface.(fmt.Stringer); ok && st != nil {
				f = zap.String(f.Key, c.s.text(st.String()))
			}
		}
		out[i] = f
	}
	return out
}
