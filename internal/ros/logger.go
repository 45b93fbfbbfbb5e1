package ros

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// ZapLevel converts an rcutils severity to the zap level used as the
// threshold of a logger (LogUnset means info, the rcutils default).
func (l LogLevel) ZapLevel() zapcore.Level {
	switch {
	case l == LogUnset:
		return zapcore.InfoLevel
	case l <= LogDebug:
		return zapcore.DebugLevel
	case l <= LogInfo:
		return zapcore.InfoLevel
	case l <= LogWarn:
		return zapcore.WarnLevel
	case l <= LogError:
		return zapcore.ErrorLevel
	}
	return zapcore.FatalLevel
}

// LogLevelOf converts a zap level to the rcutils severity (DPanic and Panic
// count as errors and fatal respectively).
func LogLevelOf(l zapcore.Level) LogLevel {
	switch {
	case l <= zapcore.DebugLevel:
		return LogDebug
	case l == zapcore.InfoLevel:
		return LogInfo
	case l == zapcore.WarnLevel:
		return LogWarn
	case l <= zapcore.DPanicLevel:
		return LogError
	}
	return LogFatal
}

// consoleCore is a zapcore.Core writing rcutils-style console lines:
//
//	[INFO] [1700000000.123456789] [demo.talker]: message key=value
//
// Lines are written whole under a mutex shared by all cores of a Context.
type consoleCore struct {
	zapcore.LevelEnabler
	mu     *sync.Mutex
	w      io.Writer
	fields []zapcore.Field
}

func newConsoleCore(mu *sync.Mutex, w io.Writer, level zapcore.LevelEnabler) *consoleCore {
	return &consoleCore{LevelEnabler: level, mu: mu, w: w}
}

func (c *consoleCore) With(fields []zapcore.Field) zapcore.Core {
	cp := *c
	cp.fields = append(append([]zapcore.Field(nil), c.fields...), fields...)
	return &cp
}

func (c *consoleCore) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(ent.Level) {
		return ce.AddCore(ent, c)
	}
	return ce
}

func (c *consoleCore) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	line := formatLogLine(ent, append(append([]zapcore.Field(nil), c.fields...), fields...))
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := io.WriteString(c.w, line)
	return err
}

func (c *consoleCore) Sync() error { return nil }

// severityName is the upper-case rcutils name of a zap level.
func severityName(l zapcore.Level) string {
	return strings.ToUpper(LogLevelOf(l).String())
}

// formatLogLine renders one entry in the rcutils default console format
// "[{severity}] [{time}] [{name}]: {message}", with zap fields appended as
// key=value pairs sorted by key.
func formatLogLine(ent zapcore.Entry, fields []zapcore.Field) string {
	var b strings.Builder
	t := ent.Time
	if t.IsZero() {
		t = time.Now()
	}
	fmt.Fprintf(&b, "[%s] [%d.%09d] [%s]: %s", severityName(ent.Level), t.Unix(), t.Nanosecond(), ent.LoggerName, ent.Message)
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
		for _, k := range keys {
			fmt.Fprintf(&b, " %s=%v", k, enc.Fields[k])
		}
	}
	b.WriteByte('\n')
	return b.String()
}

// newNodeLogger builds the console logger of a node.
func newNodeLogger(core zapcore.Core, loggerName string) *zap.Logger {
	return zap.New(core).Named(loggerName)
}
