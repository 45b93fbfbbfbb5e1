package ros

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestFormatLogLine(t *testing.T) {
	ent := zapcore.Entry{Level: zapcore.WarnLevel, Time: time.Unix(1700000000, 1234), LoggerName: "demo.talker", Message: "hot"}
	got := formatLogLine(ent, []zapcore.Field{zap.Int("b", 2), zap.String("a", "x")})
	if want := "[WARN] [1700000000.000001234] [demo.talker]: hot a=x b=2\n"; got != want {
		t.Errorf("formatLogLine = %q, want %q", got, want)
	}
	for l, want := range map[zapcore.Level]string{zapcore.DebugLevel: "DEBUG", zapcore.InfoLevel: "INFO", zapcore.ErrorLevel: "ERROR", zapcore.DPanicLevel: "ERROR", zapcore.FatalLevel: "FATAL"} {
		if got := severityName(l); got != want {
			t.Errorf("severityName(%v) = %s, want %s", l, got, want)
		}
	}
}

func TestLogLevelsConversion(t *testing.T) {
	for _, l := range []LogLevel{LogDebug, LogInfo, LogWarn, LogError, LogFatal} {
		if back := LogLevelOf(l.ZapLevel()); back != l {
			t.Errorf("%v -> %v -> %v", l, l.ZapLevel(), back)
		}
	}
	if LogUnset.ZapLevel() != zapcore.InfoLevel {
		t.Error("unset level is not info")
	}
}

// newLogContext makes a Context without DDS traffic being relevant: only
// its console output is looked at.
func newLogContext(t *testing.T, out *syncBuffer, args ...string) *Context {
	t.Helper()
	domain := uint32(domainLog)
	c, err := NewContext(ContextOptions{Args: append([]string{"--ros-args", "--disable-rosout-logs"}, args...),
		DomainID: &domain, Getenv: testEnv, NoSignals: true, LogOutput: out})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestNodeLoggerConsoleOutput(t *testing.T) {
	var out syncBuffer
	c := newLogContext(t, &out, "--log-level", "warn", "--log-level", "ns.loud:=debug")
	quiet := mustNode(t, c, "quiet", "/ns")
	loud := mustNode(t, c, "loud", "/ns")
	quiet.Logger().Infof("not shown %d", 1)
	quiet.Logger().Warnw("shown", "k", 3)
	loud.Logger().Debugf("debug shown")
	text := out.String()
	if strings.Contains(text, "not shown") {
		t.Errorf("info line below --log-level warn printed:\n%s", text)
	}
	line := regexp.MustCompile(`(?m)^\[WARN\] \[\d+\.\d{9}\] \[ns\.quiet\]: shown k=3$`)
	if !line.MatchString(text) {
		t.Errorf("no rcutils-style warn line in:\n%s", text)
	}
	if !regexp.MustCompile(`(?m)^\[DEBUG\] \[\d+\.\d{9}\] \[ns\.loud\]: debug shown$`).MatchString(text) {
		t.Errorf("per-logger debug level not applied:\n%s", text)
	}
}

func TestDisableStdoutLogs(t *testing.T) {
	var out syncBuffer
	c := newLogContext(t, &out, "--disable-stdout-logs")
	mustNode(t, c, "silent", "").Logger().Errorf("nobody hears this")
	if strings.Contains(out.String(), "nobody hears this") {
		t.Errorf("--disable-stdout-logs ignored:\n%s", out.String())
	}
}
