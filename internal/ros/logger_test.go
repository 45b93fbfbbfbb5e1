package ros

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
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
	domainLog := testenv.Domain(t)
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

// Domains of the logging tests (range 105-109 of this package's tests).

// mapEnv is a hermetic Getenv: the given variables, discovery on loopback,
// nothing else (no HOME, so no log file can reach the real ~/.ros).
func mapEnv(m map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := m[k]; ok {
			return v
		}
		return testEnv(k)
	}
}

func TestLogFormatTokens(t *testing.T) {
	at := time.Unix(1700000000, 1234)
	caller := zapcore.EntryCaller{Defined: true, File: "/src/x/motor.go", Line: 42, Function: "github.com/a/b/pkg.(*T).Run"}
	for _, tc := range []struct {
		name, format string
		time         time.Time
		caller       zapcore.EntryCaller
		want         string
	}{
		{"default", "", at, caller, "[WARN] [1700000000.000001234] [demo.talker]: hot k=1"},
		{"basic tokens", "{severity}|{name}|{message}", at, caller, "WARN|demo.talker|hot k=1"},
		{"time as nanoseconds", "{time_as_nanoseconds}", at, caller, "1700000000000001234"},
		// rcutils' own test values: 100 ns, and -100 ns.
		{"time padded", "{time}", time.Unix(0, 100), caller, "0000000000.000000100"},
		{"nanoseconds padded", "{time_as_nanoseconds}", time.Unix(0, 100), caller, "0000000000000000100"},
		{"negative time", "{time}", time.Unix(0, -100), caller, "-0000000000.000000100"},
		{"negative nanoseconds", "{time_as_nanoseconds}", time.Unix(0, -100), caller, "-0000000000000000100"},
		{"date with ms", "{date_time_with_ms}", time.Date(2026, 9, 21, 7, 8, 9, 5e6, time.Local), caller, "2026-09-21 07:08:09.005"},
		{"date with 3-digit ms", "{date_time_with_ms}", time.Date(2026, 9, 21, 7, 8, 9, 500e6+999, time.Local), caller, "2026-09-21 07:08:09.500"},
		{"location", "{file_name}:{line_number} {function_name}", at, caller, "/src/x/motor.go:42 pkg.(*T).Run"},
		{"no location", "[{file_name}:{line_number}:{function_name}]", at, zapcore.EntryCaller{}, "[:0:]"},
		{"unknown token literal", "{foo} {name}", at, caller, "{foo} demo.talker"},
		{"nested brace", "{{name}}", at, caller, "{demo.talker}"},
		{"unclosed", "x {name", at, caller, "x {name"},
		{"empty braces", "{}{severity}", at, caller, "{}WARN"},
		{"closing first", "}{message}{", at, caller, "}hot k=1{"},
		{"escapes", `a\tb\nc\x1b[1m\q\x1c\`, at, caller, "a\tb\nc\x1b[1m\\q\\x1c\\"},
		{"no tokens", "plain", at, caller, "plain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ent := zapcore.Entry{Level: zapcore.WarnLevel, Time: tc.time, LoggerName: "demo.talker", Message: "hot", Caller: tc.caller}
			got := string(consoleFormat(tc.format).appendEntry(nil, ent, []zapcore.Field{zap.Int("k", 1)}))
			if got != tc.want {
				t.Errorf("format %q: got %q, want %q", tc.format, got, tc.want)
			}
		})
	}
}

func TestLogFormatTooLongIsCut(t *testing.T) {
	long := strings.Repeat("x", maxLogFormatLen) + "{name}"
	got := string(consoleFormat(long).appendEntry(nil, zapcore.Entry{LoggerName: "n", Time: time.Unix(1, 0)}, nil))
	if got != strings.Repeat("x", maxLogFormatLen) {
		t.Errorf("format longer than %d bytes not cut: got %d bytes ending %q", maxLogFormatLen, len(got), got[len(got)-10:])
	}
}

func TestConsoleColorsAndStream(t *testing.T) {
	args := &Args{}
	for _, tc := range []struct {
		name     string
		env      map[string]string
		out      *syncBuffer // nil: the process streams
		color    bool
		stream   *os.File // expected stream when out is nil
		warnings int
	}{
		{"auto, not a terminal", nil, &syncBuffer{}, false, nil, 0},
		{"forced on", map[string]string{"RCUTILS_COLORIZED_OUTPUT": "1"}, &syncBuffer{}, true, nil, 0},
		{"forced off", map[string]string{"RCUTILS_COLORIZED_OUTPUT": "0"}, &syncBuffer{}, false, nil, 0},
		{"invalid colour value", map[string]string{"RCUTILS_COLORIZED_OUTPUT": "yes"}, &syncBuffer{}, false, nil, 1},
		{"stderr by default", nil, nil, false, os.Stderr, 0},
		{"stdout", map[string]string{"RCUTILS_LOGGING_USE_STDOUT": "1", "RCUTILS_COLORIZED_OUTPUT": "0"}, nil, false, os.Stdout, 0},
		{"stderr explicitly", map[string]string{"RCUTILS_LOGGING_USE_STDOUT": "0", "RCUTILS_COLORIZED_OUTPUT": "0"}, nil, false, os.Stderr, 0},
		{"invalid stream value", map[string]string{"RCUTILS_LOGGING_USE_STDOUT": "2", "RCUTILS_COLORIZED_OUTPUT": "0"}, nil, false, os.Stderr, 1},
		{"buffered stream accepted", map[string]string{"RCUTILS_LOGGING_BUFFERED_STREAM": "1"}, &syncBuffer{}, false, nil, 0},
		{"invalid buffered value", map[string]string{"RCUTILS_LOGGING_BUFFERED_STREAM": "x"}, &syncBuffer{}, false, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out io.Writer // stays nil without a buffer: the process streams
			if tc.out != nil {
				out = tc.out
			}
			o, warn := newLogOutputs(args, mapEnv(tc.env), out)
			if len(warn) != tc.warnings {
				t.Errorf("warnings %q, want %d", warn, tc.warnings)
			}
			if tc.out == nil {
				if o.console != tc.stream {
					t.Errorf("console stream %v, want %v", o.console, tc.stream.Name())
				}
				return
			}
			if o.color != tc.color {
				t.Errorf("colour %v, want %v", o.color, tc.color)
			}
		})
	}
}

func TestColoredLines(t *testing.T) {
	var out syncBuffer
	o, _ := newLogOutputs(&Args{}, mapEnv(map[string]string{"RCUTILS_COLORIZED_OUTPUT": "1", "RCUTILS_CONSOLE_OUTPUT_FORMAT": "{severity}: {message}"}), &out)
	log := newNodeLogger(o.core(LogDebug), "c")
	log.Debug("d")
	log.Info("i")
	log.Warn("w")
	log.Error("e")
	want := "\033[32mDEBUG: d\033[0m\n" + "\033[0mINFO: i\033[0m\n" + "\033[33mWARN: w\033[0m\n" + "\033[31mERROR: e\033[0m\n"
	if got := out.String(); got != want {
		t.Errorf("coloured output\n got %q\nwant %q", got, want)
	}
	if severityColor(zapcore.FatalLevel) != colorRed {
		t.Error("fatal is not red")
	}
}

func TestContextConsoleFormatAndCaller(t *testing.T) {
	domainLogFormat := testenv.Domain(t)
	var out syncBuffer
	domain := uint32(domainLogFormat)
	c, err := NewContext(ContextOptions{Args: []string{"--ros-args", "--disable-rosout-logs"}, DomainID: &domain, NoSignals: true, LogOutput: &out,
		Getenv: mapEnv(map[string]string{"RCUTILS_CONSOLE_OUTPUT_FORMAT": `{severity}\t{name} {file_name}:{line_number} {function_name}: {message}`})})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if p := c.LogFilePath(); p != "" {
		t.Errorf("a Context with LogOutput writes a log file %s", p)
	}
	mustNode(t, c, "fmt", "/ns").Logger().Infof("hello %d", 7)
	re := regexp.MustCompile(`(?m)^INFO\tns\.fmt \S+/internal/ros/logger_test\.go:\d+ ros\.TestContextConsoleFormatAndCaller: hello 7$`)
	if !re.MatchString(out.String()) {
		t.Errorf("no line with the caller's file, line and function in:\n%s", out.String())
	}
}

// BenchmarkLogLine measures one enabled line through the default format
// (caller recorded, one field) to a discarding console.
func BenchmarkLogLine(b *testing.B) {
	o, _ := newLogOutputs(&Args{}, mapEnv(nil), io.Discard)
	log := newNodeLogger(o.core(LogInfo), "bench.node").Sugar()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		log.Infow("tick", "n", i)
	}
}

// BenchmarkLogLineDisabled measures a debug call below the logger's level.
func BenchmarkLogLineDisabled(b *testing.B) {
	o, _ := newLogOutputs(&Args{}, mapEnv(nil), io.Discard)
	log := newNodeLogger(o.core(LogInfo), "bench.node").Sugar()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		log.Debugw("tick", "n", i)
	}
}
