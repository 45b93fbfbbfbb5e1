package ros

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// logFile is the per-process log file of rcl_logging_spdlog:
// <log dir>/<prefix>_<pid>_<milliseconds since the epoch>.log, holding every
// log line of the process in the console format, without colour. Writes are
// serialised by logOutputs.mu; each line is one unbuffered write, so nothing
// is lost when the process exits without closing the Context.
type logFile struct {
	f      *os.File
	path   string
	failed atomic.Uint64 // lines that could not be written
}

// logDirectory resolves the log directory as rcl_logging_interface does:
// $ROS_LOG_DIR if non-empty, else $ROS_HOME/log if ROS_HOME is non-empty,
// else ~/.ros/log; a leading '~' is replaced by $HOME.
func logDirectory(getenv func(string) string) (string, error) {
	dir := getenv("ROS_LOG_DIR")
	if dir == "" {
		home := getenv("ROS_HOME")
		if home == "" {
			home = filepath.Join("~", ".ros")
		}
		dir = filepath.Join(home, "log")
	}
	if strings.HasPrefix(dir, "~") {
		h := getenv("HOME")
		if h == "" {
			return "", errors.New("log directory " + dir + ": HOME is not set")
		}
		dir = h + dir[1:]
	}
	return dir, nil
}

// logFileName is "<prefix>_<pid>_<ms since epoch>.log".
func logFileName(prefix string, pid int, now time.Time) string {
	return fmt.Sprintf("%s_%d_%d.log", prefix, pid, now.UnixMilli())
}

// executableName is the base name of the program as started (argv[0]), the
// default file name prefix (rcutils_get_executable_name).
func executableName() string {
	if len(os.Args) == 0 || os.Args[0] == "" {
		return "unknown"
	}
	return filepath.Base(os.Args[0])
}

// openLogFile creates dir (and its parents) and opens the log file of this
// process in it for appending.
func openLogFile(dir, prefix string, pid int, now time.Time) (*logFile, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating log directory: %w", err)
	}
	path := filepath.Join(dir, logFileName(prefix, pid, now))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening log file: %w", err)
	}
	return &logFile{f: f, path: path}, nil
}

// write appends one line; failures are counted, not reported (reporting
// would log, and logging is what failed).
func (l *logFile) write(line []byte) {
	if _, err := l.f.Write(line); err != nil {
		l.failed.Add(1)
	}
}

func (l *logFile) close() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("ros: closing log file: %w", err)
	}
	return nil
}

// wantLogFile decides whether a Context writes a log file:
// --disable-external-lib-logs turns it off and --enable-external-lib-logs
// on; without either, it is on unless ContextOptions.LogOutput is set (tests
// and embedding programs that capture the console output).
func wantLogFile(args *Args, explicitOutput bool) bool {
	if args.ExternalLibLogs != nil {
		return *args.ExternalLibLogs
	}
	return !explicitOutput
}

// setUpLogFile opens the log file of a Context if wanted. It never fails the
// Context: problems come back as warnings for the console, and the process
// goes on without a file.
func (o *logOutputs) setUpLogFile(args *Args, getenv func(string) string, explicitOutput bool, now time.Time) []string {
	if !wantLogFile(args, explicitOutput) {
		return nil
	}
	var warn []string
	if args.LogConfigFile != "" {
		warn = append(warn, fmt.Sprintf("--log-config-file %s ignored: external logging configuration files are not supported (as with rcl_logging_spdlog); writing the default log file", args.LogConfigFile))
	}
	dir, err := logDirectory(getenv)
	if err != nil {
		return append(warn, "no log file: "+err.Error())
	}
	prefix := args.LogFileName
	if prefix == "" {
		prefix = executableName()
	}
	f, err := openLogFile(dir, prefix, os.Getpid(), now)
	if err != nil {
		return append(warn, fmt.Sprintf("no log file in %s: %v", dir, err))
	}
	o.mu.Lock()
	o.file = f
	o.mu.Unlock()
	return warn
}

// LogFilePath returns the path of the Context's log file, or "" if it
// writes none (--disable-external-lib-logs, ContextOptions.LogOutput set,
// or the directory was not writable).
func (c *Context) LogFilePath() string {
	c.logOut.mu.Lock()
	defer c.logOut.mu.Unlock()
	if c.logOut.file == nil {
		return ""
	}
	return c.logOut.file.path
}
