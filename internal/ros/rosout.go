package ros

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"

	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"

	"go.uber.org/zap/zapcore"

	rcl_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/msg"
)

// rosoutCore is a zapcore.Core that turns log entries into
// rcl_interfaces/msg/Log records for /rosout: stamp = wall-clock time of the
// call, level = rcutils severity, name = logger name, msg = the message
// with zap fields appended as " key=value" (sorted), file/function/line
// from the caller when the logger records it.
//
// Publishing must not log (that would recurse); failures are counted.
type rosoutCore struct {
	zapcore.LevelEnabler
	publish func(*rcl_interfaces_msg.Log) error
	fields  []zapcore.Field
	failed  *atomic.Uint64
}

func newRosoutCore(level zapcore.LevelEnabler, publish func(*rcl_interfaces_msg.Log) error) *rosoutCore {
	return &rosoutCore{LevelEnabler: level, publish: publish, failed: new(atomic.Uint64)}
}

func (c *rosoutCore) With(fields []zapcore.Field) zapcore.Core {
	cp := *c
	cp.fields = append(append([]zapcore.Field(nil), c.fields...), fields...)
	return &cp
}

func (c *rosoutCore) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(ent.Level) {
		return ce.AddCore(ent, c)
	}
	return ce
}

func (c *rosoutCore) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	if err := c.publish(rosoutRecord(ent, append(append([]zapcore.Field(nil), c.fields...), fields...))); err != nil {
		c.failed.Add(1)
	}
	return nil
}

func (c *rosoutCore) Sync() error { return nil }

// rosoutRecord builds the Log message of one entry.
func rosoutRecord(ent zapcore.Entry, fields []zapcore.Field) *rcl_interfaces_msg.Log {
	msg := ent.Message
	if len(fields) > 0 {
		enc := zapcore.NewMapObjectEncoder()
		for _, f := range fields {
			f.AddTo(enc)
		}
		keys := make([]string, 0, len(enc.Fields))
		for k := range enc.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		b.WriteString(msg)
		for _, k := range keys {
			b.WriteString(" " + k + "=")
			b.WriteString(strings.TrimSpace(strings.ReplaceAll(fmt.Sprint(enc.Fields[k]), "\n", " ")))
		}
		msg = b.String()
	}
	rec := &rcl_interfaces_msg.Log{
		Stamp: builtin_interfaces_msg.TimeOf(ent.Time),
		Level: uint8(LogLevelOf(ent.Level)),
		Name:  ent.LoggerName,
		Msg:   msg,
	}
	if ent.Caller.Defined {
		rec.File = filepath.Base(ent.Caller.File)
		rec.Function = ent.Caller.Function
		if ent.Caller.Line > 0 {
			rec.Line = uint32(ent.Caller.Line)
		}
	}
	return rec
}
