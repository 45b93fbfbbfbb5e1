package dynamixel

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

var baudRates = map[int]uint32{
	9600: syscall.B9600, 19200: syscall.B19200, 38400: syscall.B38400, 57600: syscall.B57600,
	115200: syscall.B115200, 230400: syscall.B230400, 460800: syscall.B460800,
	500000: syscall.B500000, 1000000: syscall.B1000000,
}

// OpenSerial opens a serial device (e.g. /dev/ttyUSB0) in raw 8N1 mode at
// the given baud rate. The returned file supports read deadlines.
func OpenSerial(path string, baud int) (*os.File, error) {
	speed, ok := baudRates[baud]
	if !ok {
		return nil, fmt.Errorf("dynamixel: unsupported baud rate %d", baud)
	}
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("dynamixel: open serial port: %w", err)
	}
	if err := makeRaw(f, speed); err != nil {
		f.Close()
		return nil, fmt.Errorf("dynamixel: configure %s: %w", path, err)
	}
	return f, nil
}

// makeRaw sets raw mode (like cfmakeraw) and the speed through the file's
// raw connection, which keeps the descriptor in non-blocking poller mode.
func makeRaw(f *os.File, speed uint32) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ioErr error
	err = rc.Control(func(fd uintptr) {
		var t syscall.Termios
		if ioErr = ioctl(fd, syscall.TCGETS, unsafe.Pointer(&t)); ioErr != nil {
			return
		}
		t.Iflag &^= syscall.IGNBRK | syscall.BRKINT | syscall.PARMRK | syscall.ISTRIP |
			syscall.INLCR | syscall.IGNCR | syscall.ICRNL | syscall.IXON | syscall.IXOFF
		t.Oflag &^= syscall.OPOST
		t.Lflag &^= syscall.ECHO | syscall.ECHONL | syscall.ICANON | syscall.ISIG | syscall.IEXTEN
		t.Cflag &^= syscall.CSIZE | syscall.PARENB | syscall.CSTOPB | cbaud
		t.Cflag |= syscall.CS8 | syscall.CREAD | syscall.CLOCAL | speed
		t.Ispeed, t.Ospeed = speed, speed
		t.Cc[syscall.VMIN], t.Cc[syscall.VTIME] = 1, 0
		ioErr = ioctl(fd, syscall.TCSETS, unsafe.Pointer(&t))
	})
	return errors.Join(err, ioErr)
}

func ioctl(fd uintptr, req uintptr, arg unsafe.Pointer) error {
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(arg)); e != 0 {
		return e
	}
	return nil
}

// OpenPTY opens a new pseudo-terminal pair: the master side, and the path of
// the slave device, which OpenSerial can open like a serial port. Tests and
// the simulated bus use it to stand in for a USB serial adapter.
func OpenPTY() (master *os.File, slave string, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, "", fmt.Errorf("dynamixel: open /dev/ptmx: %w", err)
	}
	rc, err := m.SyscallConn()
	if err != nil {
		m.Close()
		return nil, "", err
	}
	var n uint32
	var ioErr error
	err = rc.Control(func(fd uintptr) {
		var unlock int32
		if ioErr = ioctl(fd, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); ioErr != nil {
			return
		}
		ioErr = ioctl(fd, syscall.TIOCGPTN, unsafe.Pointer(&n))
	})
	if err = errors.Join(err, ioErr); err != nil {
		m.Close()
		return nil, "", fmt.Errorf("dynamixel: set up pty: %w", err)
	}
	return m, fmt.Sprintf("/dev/pts/%d", n), nil
}

// cbaud is the Linux CBAUD|CBAUDEX mask of the speed bits in c_cflag
// (termbits.h), which package syscall does not export.
const cbaud = 0o010017
