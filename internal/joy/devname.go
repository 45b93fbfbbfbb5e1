package joy

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"unsafe"
)

// jsiocgname is JSIOCGNAME(len) of linux/joystick.h: _IOC(_IOC_READ, 'j',
// 0x13, len), which copies the joystick's name into a buffer of len bytes.
func jsiocgname(n uintptr) uintptr { return 2<<30 | n<<16 | 'j'<<8 | 0x13 }

// deviceName returns the name a joystick device reports, as joy_linux
// reads it.
func deviceName(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	raw, err := f.SyscallConn()
	if err != nil {
		return "", err
	}
	var buf [128]byte
	var errno syscall.Errno
	if err := raw.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, jsiocgname(uintptr(len(buf))), uintptr(unsafe.Pointer(&buf[0])))
	}); err != nil {
		return "", err
	}
	if errno != 0 {
		return "", errno
	}
	name, _, _ := strings.Cut(string(buf[:]), "\x00")
	return name, nil
}

// findByName returns the first joystick (js*, a character device, in name
// order) under InputDir whose name contains DevName, and a list of the
// joysticks seen ("name (path)", or "none") for the log.
func (d *Driver) findByName() (path, found string, err error) {
	dir := d.InputDir
	if dir == "" {
		dir = "/dev/input"
	}
	nameOf := d.nameOf
	if nameOf == nil {
		nameOf = deviceName
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", "", err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	var seen []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "js") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		// stat follows links (udev's by-id names), as joy_linux's does.
		if st, err := os.Stat(p); err != nil || st.Mode()&os.ModeCharDevice == 0 {
			continue
		}
		name, err := nameOf(p)
		if err != nil {
			name = "Unknown"
		}
		seen = append(seen, name+" ("+p+")")
		if strings.Contains(name, d.DevName) {
			return p, "", nil
		}
	}
	if len(seen) == 0 {
		return "", "none", nil
	}
	return "", strings.Join(seen, ", "), nil
}
