package ros

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

func TestLogDirectory(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    string
		wantErr bool
	}{
		{"ROS_LOG_DIR wins", map[string]string{"ROS_LOG_DIR": "/var/log/ros", "ROS_HOME": "/rh", "HOME": "/h"}, "/var/log/ros", false},
		{"ROS_LOG_DIR with ~", map[string]string{"ROS_LOG_DIR": "~/logs", "HOME": "/h"}, "/h/logs", false},
		{"ROS_HOME", map[string]string{"ROS_HOME": "/rh", "HOME": "/h"}, "/rh/log", false},
		{"ROS_HOME with ~", map[string]string{"ROS_HOME": "~/rh", "HOME": "/h"}, "/h/rh/log", false},
		{"default", map[string]string{"HOME": "/h"}, "/h/.ros/log", false},
		{"no HOME", map[string]string{}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := logDirectory(func(k string) string { return tc.env[k] })
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("logDirectory = %q, %v; want %q (error %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
	if got := logFileName("talker", 42, time.UnixMilli(1700000000123)); got != "talker_42_1700000000123.log" {
		t.Errorf("logFileName = %q", got)
	}
}

// newFileContext makes a Context whose log directory is dir (ROS_LOG_DIR);
// console output goes to out, or to the process streams if out is nil.
func newFileContext(t *testing.T, dir string, out *syncBuffer, args ...string) *Context {
	domainLogFile := testenv.Domain(t)
	t.Helper()
	domain := uint32(domainLogFile)
	opts := ContextOptions{Args: append([]string{"--ros-args", "--disable-rosout-logs"}, args...), DomainID: &domain, NoSignals: true,
		Getenv: mapEnv(map[string]string{"ROS_LOG_DIR": dir})}
	if out != nil {
		opts.LogOutput = out
	}
	c, err := NewContext(opts)
	if err != nil {
		t.Fatalf("NewContext: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// logFiles lists the files in dir (none if dir does not exist).
func logFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestContextWritesLogFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not", "yet") // created by the Context
	var out syncBuffer
	c := newFileContext(t, dir, &out, "--enable-external-lib-logs", "--log-level", "warn", "--log-level", "ns.loud:=debug")
	loud := mustNode(t, c, "loud", "/ns")
	quiet := mustNode(t, c, "quiet", "/ns")
	loud.Logger().Debugw("debug line", "k", 1)
	loud.Logger().Warnf("warn line %d", 2)
	quiet.Logger().Info("quiet info")
	quiet.Logger().Errorf("quiet error")
	path := c.LogFilePath()
	names := logFiles(t, dir)
	if len(names) != 1 || filepath.Join(dir, names[0]) != path {
		t.Fatalf("log dir holds %v, LogFilePath %q", names, path)
	}
	exe := regexp.QuoteMeta(filepath.Base(os.Args[0]))
	if !regexp.MustCompile(fmt.Sprintf(`^%s_%d_\d{13}\.log$`, exe, os.Getpid())).MatchString(names[0]) {
		t.Errorf("log file name %q is not <exe>_<pid>_<ms>.log", names[0])
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	quiet.Logger().Error("after close") // must not panic or reach the file
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, want := range []string{`(?m)^\[WARN\] \[\d{10}\.\d{9}\] \[ns\.loud\]: warn line 2$`, `(?m)^\[ERROR\] \[\d{10}\.\d{9}\] \[ns\.quiet\]: quiet error$`} {
		if !regexp.MustCompile(want).MatchString(text) {
			t.Errorf("log file lacks %s:\n%s", want, text)
		}
	}
	// rcl gives the file logger the global level: a logger's lower own
	// level shows on the console only.
	if strings.Contains(text, "debug line") || strings.Contains(text, "quiet info") || strings.Contains(text, "after close") {
		t.Errorf("log file holds lines below the global level or after Close:\n%s", text)
	}
	if !strings.Contains(out.String(), "debug line k=1") {
		t.Errorf("console lacks the per-logger debug line:\n%s", out.String())
	}
}

func TestLogFileDefaultsAndPrefix(t *testing.T) {
	for _, tc := range []struct {
		name    string
		capture bool // set ContextOptions.LogOutput
		args    []string
		prefix  string // "" = no file
	}{
		{"process streams: on by default", false, []string{"--disable-stdout-logs"}, filepath.Base(os.Args[0])},
		{"disabled", false, []string{"--disable-stdout-logs", "--disable-external-lib-logs"}, ""},
		{"captured output: off by default", true, nil, ""},
		{"captured output, enabled", true, []string{"--enable-external-lib-logs"}, filepath.Base(os.Args[0])},
		{"file name prefix", true, []string{"--enable-external-lib-logs", "--log-file-name", "my_robot"}, "my_robot"},
		{"last toggle wins", true, []string{"--enable-external-lib-logs", "--disable-external-lib-logs"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var out *syncBuffer
			if tc.capture {
				out = &syncBuffer{}
			}
			c := newFileContext(t, dir, out, tc.args...)
			mustNode(t, c, "n", "").Logger().Warn("to the file")
			c.Close()
			names := logFiles(t, dir)
			if tc.prefix == "" {
				if len(names) != 0 || c.LogFilePath() != "" {
					t.Fatalf("log files written: %v", names)
				}
				return
			}
			if len(names) != 1 || !strings.HasPrefix(names[0], fmt.Sprintf("%s_%d_", tc.prefix, os.Getpid())) {
				t.Fatalf("log dir holds %v, want one %s_<pid>_<ms>.log", names, tc.prefix)
			}
			data, err := os.ReadFile(filepath.Join(dir, names[0]))
			if err != nil || !strings.Contains(string(data), "]: to the file\n") {
				t.Errorf("log file content %q, %v", data, err)
			}
		})
	}
}

func TestLogFileNotColored(t *testing.T) {
	domainLogFile := testenv.Domain(t)
	dir := t.TempDir()
	var out syncBuffer
	domain := uint32(domainLogFile)
	c, err := NewContext(ContextOptions{Args: []string{"--ros-args", "--disable-rosout-logs", "--enable-external-lib-logs"}, DomainID: &domain, NoSignals: true, LogOutput: &out,
		Getenv: mapEnv(map[string]string{"ROS_LOG_DIR": dir, "RCUTILS_COLORIZED_OUTPUT": "1", "RCUTILS_CONSOLE_OUTPUT_FORMAT": "{severity} {message}"})})
	if err != nil {
		t.Fatal(err)
	}
	mustNode(t, c, "n", "").Logger().Warn("w")
	path := c.LogFilePath()
	c.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "WARN w\n" {
		t.Errorf("log file %q, want the format without colour", data)
	}
	if !strings.Contains(out.String(), "\033[33mWARN w\033[0m\n") {
		t.Errorf("console %q is not coloured", out.String())
	}
}

func TestUnwritableLogDirWarnsAndStarts(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	// A directory below a regular file cannot be created, even by root.
	c := newFileContext(t, filepath.Join(blocker, "log"), &out, "--enable-external-lib-logs")
	n := mustNode(t, c, "still_up", "")
	n.Logger().Info("running")
	text := out.String()
	if strings.Count(text, "no log file") != 1 || !regexp.MustCompile(`(?m)^\[WARN\] \[\d+\.\d{9}\] \[rcl\]: no log file in `).MatchString(text) {
		t.Errorf("want exactly one warning about the log file:\n%s", text)
	}
	if !strings.Contains(text, "[still_up]: running") || c.LogFilePath() != "" {
		t.Errorf("node did not log to the console after the failure:\n%s", text)
	}
}

func TestNoHomeNoLogFile(t *testing.T) {
	domainLogFile := testenv.Domain(t)
	var out syncBuffer
	domain := uint32(domainLogFile)
	// mapEnv has no HOME: the default ~/.ros/log cannot be resolved.
	c, err := NewContext(ContextOptions{Args: []string{"--ros-args", "--disable-rosout-logs", "--enable-external-lib-logs", "--log-config-file", "x.conf"}, DomainID: &domain, NoSignals: true, LogOutput: &out, Getenv: mapEnv(nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.LogFilePath() != "" || !strings.Contains(out.String(), "HOME is not set") || !strings.Contains(out.String(), "--log-config-file x.conf ignored") {
		t.Errorf("want warnings about HOME and the config file, got:\n%s", out.String())
	}
}
