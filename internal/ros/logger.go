package ros

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
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

// severityName is the upper-case rcutils name of a zap level.
func severityName(l zapcore.Level) string {
	switch LogLevelOf(l) {
	case LogDebug:
		return "DEBUG"
	case LogInfo:
		return "INFO"
	case LogWarn:
		return "WARN"
	case LogError:
		return "ERROR"
	}
	return "FATAL"
}

// ANSI colours of rcutils' console output handler: debug green, info the
// terminal's normal colour, warn yellow, error and fatal red; every
// coloured line ends with the reset sequence.
const (
	colorNormal = "\033[0m"
	colorRed    = "\033[31m"
	colorGreen  = "\033[32m"
	colorYellow = "\033[33m"
)

// severityColor is the colour rcutils puts in front of a line of level l.
func severityColor(l zapcore.Level) string {
	switch LogLevelOf(l) {
	case LogDebug:
		return colorGreen
	case LogInfo:
		return colorNormal
	case LogWarn:
		return colorYellow
	}
	return colorRed
}

// DefaultLogFormat is rcutils' console format when
// RCUTILS_CONSOLE_OUTPUT_FORMAT is unset or empty.
const DefaultLogFormat = "[{severity}] [{time}] [{name}]: {message}"

// maxLogFormatLen is rcutils' limit on the format string; longer values of
// RCUTILS_CONSOLE_OUTPUT_FORMAT are cut (2048 bytes including the NUL).
const maxLogFormatLen = 2047

// logToken is one {token} of a console format.
type logToken uint8

const (
	tokLiteral logToken = iota
	tokSeverity
	tokName
	tokMessage
	tokFunctionName
	tokFileName
	tokTime
	tokTimeNanoseconds
	tokDateTimeMs
	tokLineNumber
)

// lookupLogToken maps the text between braces to the tokens rcutils (Jazzy)
// expands; anything else is printed as is.
func lookupLogToken(name string) (logToken, bool) {
	switch name {
	case "severity":
		return tokSeverity, true
	case "name":
		return tokName, true
	case "message":
		return tokMessage, true
	case "function_name":
		return tokFunctionName, true
	case "file_name":
		return tokFileName, true
	case "time":
		return tokTime, true
	case "time_as_nanoseconds":
		return tokTimeNanoseconds, true
	case "date_time_with_ms":
		return tokDateTimeMs, true
	case "line_number":
		return tokLineNumber, true
	}
	return tokLiteral, false
}

// logSegment is a literal text (tok == tokLiteral) or a token.
type logSegment struct {
	tok logToken
	lit string
}

// logFormat is a parsed console format; it is immutable once parsed.
type logFormat []logSegment

// parseLogFormat parses a console format the way rcutils walks it: at each
// '{' it looks for the next '}'; if the text between them is a known token
// it is expanded, otherwise the '{' is printed and the scan goes on from the
// next character (so "{{name}" prints "{" and the name). Without any further
// '}' the rest is literal. Escape sequences are not handled here (see
// expandLogFormatEscapes).
func parseLogFormat(s string) logFormat {
	var f logFormat
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			f = append(f, logSegment{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		open := strings.IndexByte(s[i:], '{')
		if open < 0 {
			lit.WriteString(s[i:])
			break
		}
		lit.WriteString(s[i : i+open])
		i += open
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			lit.WriteString(s[i:])
			break
		}
		tok, ok := lookupLogToken(s[i+1 : i+end])
		if !ok {
			lit.WriteByte('{')
			i++
			continue
		}
		flush()
		f = append(f, logSegment{tok: tok})
		i += end + 1
	}
	flush()
	return f
}

// expandLogFormatEscapes replaces the escape sequences rcutils (Jazzy)
// accepts in RCUTILS_CONSOLE_OUTPUT_FORMAT: \a, \b, \n, \r, \t and \x1b
// (ESC, for ANSI styles). Other backslashes are kept as they are.
func expandLogFormatEscapes(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'x':
			if strings.HasPrefix(s[i:], `\x1b`) {
				b.WriteByte(0x1b)
				i += 3
				continue
			}
			b.WriteByte('\\')
			continue
		default:
			b.WriteByte('\\')
			continue
		}
		i++
	}
	return b.String()
}

// consoleFormat returns the parsed format of RCUTILS_CONSOLE_OUTPUT_FORMAT
// (DefaultLogFormat when it is empty).
func consoleFormat(env string) logFormat {
	if env == "" {
		return parseLogFormat(DefaultLogFormat)
	}
	if len(env) > maxLogFormatLen {
		env = env[:maxLogFormatLen]
	}
	return parseLogFormat(expandLogFormatEscapes(env))
}

// appendEntry renders one entry (without newline) to b. The message is the
// entry's message with the zap fields appended as " key=value" sorted by
// key. file/function/line come from the entry's caller when the logger
// records it; without one they are empty and 0, as rcutils prints them for a
// log call without location.
func (f logFormat) appendEntry(b []byte, ent zapcore.Entry, fields []zapcore.Field) []byte {
	t := ent.Time
	if t.IsZero() {
		t = time.Now()
	}
	for _, s := range f {
		switch s.tok {
		case tokLiteral:
			b = append(b, s.lit...)
		case tokSeverity:
			b = append(b, severityName(ent.Level)...)
		case tokName:
			b = append(b, ent.LoggerName...)
		case tokMessage:
			b = appendMessage(b, ent.Message, fields)
		case tokFunctionName:
			if ent.Caller.Defined {
				b = append(b, shortFunctionName(ent.Caller.Function)...)
			}
		case tokFileName:
			if ent.Caller.Defined {
				b = append(b, ent.Caller.File...)
			}
		case tokLineNumber:
			line := 0
			if ent.Caller.Defined {
				line = ent.Caller.Line
			}
			b = strconv.AppendInt(b, int64(line), 10)
		case tokTime:
			b = appendSeconds(b, t.UnixNano())
		case tokTimeNanoseconds:
			b = appendNanoseconds(b, t.UnixNano())
		case tokDateTimeMs:
			b = appendDateTimeMs(b, t)
		}
	}
	return b
}

// shortFunctionName drops the import path of a Go function name:
// "github.com/x/y/pkg.(*T).Method" becomes "pkg.(*T).Method".
func shortFunctionName(fn string) string {
	if i := strings.LastIndexByte(fn, '/'); i >= 0 {
		return fn[i+1:]
	}
	return fn
}

// appendMessage appends msg and the fields as " key=value" sorted by key.
func appendMessage(b []byte, msg string, fields []zapcore.Field) []byte {
	b = append(b, msg...)
	if len(fields) == 0 {
		return b
	}
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
		b = append(b, ' ')
		b = append(b, k...)
		b = append(b, '=')
		b = fmt.Append(b, enc.Fields[k])
	}
	return b
}

// appendPadded appends v in decimal, zero-padded to at least width digits.
func appendPadded(b []byte, v uint64, width int) []byte {
	var tmp [20]byte
	d := strconv.AppendUint(tmp[:0], v, 10)
	for n := len(d); n < width; n++ {
		b = append(b, '0')
	}
	return append(b, d...)
}

func absNanos(ns int64) (uint64, bool) {
	if ns < 0 {
		return uint64(-(ns + 1)) + 1, true
	}
	return uint64(ns), false
}

// appendSeconds is rcutils' {time}: seconds zero-padded to 10 digits, a
// dot, 9 digits of nanoseconds; negative times get a leading '-'.
func appendSeconds(b []byte, ns int64) []byte {
	abs, neg := absNanos(ns)
	if neg {
		b = append(b, '-')
	}
	b = appendPadded(b, abs/1e9, 10)
	b = append(b, '.')
	return appendPadded(b, abs%1e9, 9)
}

// appendNanoseconds is rcutils' {time_as_nanoseconds}: the nanoseconds
// since the epoch zero-padded to 19 digits (printf "%.19d").
func appendNanoseconds(b []byte, ns int64) []byte {
	abs, neg := absNanos(ns)
	if neg {
		b = append(b, '-')
	}
	return appendPadded(b, abs, 19)
}

// appendDateTimeMs is rcutils' {date_time_with_ms}: local time as
// "2006-01-02 15:04:05.000" (milliseconds zero-padded, as rcutils formats
// them since ros2/rcutils#570).
func appendDateTimeMs(b []byte, t time.Time) []byte {
	return t.Local().AppendFormat(b, "2006-01-02 15:04:05.000")
}

// formatLogLine renders one entry in the default console format, with a
// trailing newline and without colour.
func formatLogLine(ent zapcore.Entry, fields []zapcore.Field) string {
	return string(append(consoleFormat("").appendEntry(nil, ent, fields), '\n'))
}

// colorMode is RCUTILS_COLORIZED_OUTPUT.
type colorMode uint8

const (
	colorAuto colorMode = iota // unset: colour when the output is a terminal
	colorOff                   // "0"
	colorOn                    // "1"
)

// logOutputs is what a Context's loggers write to: the console (with the
// format and colour decision made once at start-up) and the log file. It is
// shared by all loggers of the Context; mu keeps lines whole.
type logOutputs struct {
	mu      sync.Mutex
	format  logFormat
	console io.Writer // nil with --disable-stdout-logs
	color   bool
	file    *logFile // nil without a log file
	// fileMin is the global --log-level (LogUnset if not given): rcl sets
	// it as the level of the spdlog file logger, so the file drops lines
	// below it even when a logger's own level lets them through.
	fileMin LogLevel
}

// zeroOrOne reads an rcutils 0/1 environment variable: "" -> unset, "0",
// "1"; anything else gives a warning and counts as unset.
func zeroOrOne(getenv func(string) string, name string, warn *[]string) (set, one bool) {
	switch v := getenv(name); v {
	case "":
		return false, false
	case "0":
		return true, false
	case "1":
		return true, true
	default:
		*warn = append(*warn, fmt.Sprintf("unexpected value %q for %s (valid: 0 or 1); using the default", v, name))
		return false, false
	}
}

// isTerminal reports whether w is a character device such as a terminal
// (os.File with ModeCharDevice; other writers are not terminals).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// newLogOutputs reads RCUTILS_CONSOLE_OUTPUT_FORMAT,
// RCUTILS_COLORIZED_OUTPUT, RCUTILS_LOGGING_USE_STDOUT and
// RCUTILS_LOGGING_BUFFERED_STREAM through getenv and sets up the console
// side. out is ContextOptions.LogOutput (nil = stderr, or stdout with
// RCUTILS_LOGGING_USE_STDOUT=1). It returns warnings about invalid values.
func newLogOutputs(args *Args, getenv func(string) string, out io.Writer) (*logOutputs, []string) {
	var warn []string
	o := &logOutputs{format: consoleFormat(getenv("RCUTILS_CONSOLE_OUTPUT_FORMAT")), fileMin: args.LogLevel}
	_, useStdout := zeroOrOne(getenv, "RCUTILS_LOGGING_USE_STDOUT", &warn)
	// Every line is one Write call, so line-buffered and unbuffered
	// streams behave alike; the variable is only checked.
	zeroOrOne(getenv, "RCUTILS_LOGGING_BUFFERED_STREAM", &warn)
	mode := colorAuto
	if set, on := zeroOrOne(getenv, "RCUTILS_COLORIZED_OUTPUT", &warn); set {
		mode = colorOff
		if on {
			mode = colorOn
		}
	}
	if out == nil {
		out = os.Stderr
		if useStdout {
			out = os.Stdout
		}
	}
	if args.StdoutLogs == nil || *args.StdoutLogs {
		o.console = out
	}
	o.color = mode == colorOn || (mode == colorAuto && isTerminal(out))
	return o, warn
}

// close closes the log file; later lines go to the console only.
func (o *logOutputs) close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.file == nil {
		return nil
	}
	err := o.file.close()
	o.file = nil
	return err
}

// core returns the zap core of one logger: console lines at the logger's
// level, file lines at the logger's level and at least the global level.
func (o *logOutputs) core(level LogLevel) zapcore.Core {
	c := &outputCore{out: o, console: o.console != nil, consoleLevel: level.ZapLevel()}
	o.mu.Lock()
	c.file = o.file != nil
	o.mu.Unlock()
	c.fileLevel = c.consoleLevel
	if o.fileMin != LogUnset && o.fileMin.ZapLevel() > c.fileLevel {
		c.fileLevel = o.fileMin.ZapLevel()
	}
	if !c.console && !c.file {
		return zapcore.NewNopCore()
	}
	return c
}

// outputCore is the zapcore.Core of one logger writing rcutils-style lines
// to the console and the log file; each entry is formatted once.
type outputCore struct {
	out                     *logOutputs
	console, file           bool
	consoleLevel, fileLevel zapcore.Level
	fields                  []zapcore.Field
}

func (c *outputCore) Enabled(l zapcore.Level) bool {
	return (c.console && l >= c.consoleLevel) || (c.file && l >= c.fileLevel)
}

func (c *outputCore) With(fields []zapcore.Field) zapcore.Core {
	cp := *c
	cp.fields = append(append([]zapcore.Field(nil), c.fields...), fields...)
	return &cp
}

func (c *outputCore) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(ent.Level) {
		return ce.AddCore(ent, c)
	}
	return ce
}

func (c *outputCore) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	all := fields
	if len(c.fields) > 0 {
		all = append(append([]zapcore.Field(nil), c.fields...), fields...)
	}
	toConsole := c.console && ent.Level >= c.consoleLevel
	toFile := c.file && ent.Level >= c.fileLevel
	line := append(c.out.format.appendEntry(make([]byte, 0, 256), ent, all), '\n')
	var colored []byte
	if toConsole && c.out.color {
		col := severityColor(ent.Level)
		colored = make([]byte, 0, len(col)+len(line)+len(colorNormal))
		colored = append(append(append(append(colored, col...), line[:len(line)-1]...), colorNormal...), '\n')
	}
	c.out.mu.Lock()
	defer c.out.mu.Unlock()
	var err error
	if toFile && c.out.file != nil {
		c.out.file.write(line)
	}
	if toConsole {
		if colored != nil {
			_, err = c.out.console.Write(colored)
		} else {
			_, err = c.out.console.Write(line)
		}
	}
	return err
}

func (c *outputCore) Sync() error { return nil }

// consoleCore returns the core of a logger: console (level from
// --log-level, off with --disable-stdout-logs) and log file.
func (c *Context) consoleCore(loggerName string) zapcore.Core {
	return c.logOut.core(c.args.LevelFor(loggerName))
}

// newNodeLogger builds a logger over core. It records the caller, which
// fills {file_name}, {function_name} and {line_number} and the location
// fields of /rosout records.
func newNodeLogger(core zapcore.Core, loggerName string) *zap.Logger {
	return zap.New(core, zap.AddCaller()).Named(loggerName)
}
