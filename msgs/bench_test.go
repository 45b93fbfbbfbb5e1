package msgs_test

import (
	"fmt"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
)

func benchJointState() *sensor_msgs_msg.JointState {
	m := sensor_msgs_msg.NewJointState()
	m.Header.FrameId = "base_link"
	for i := 0; i < 18; i++ { // a hexapod
		m.Name = append(m.Name, fmt.Sprintf("leg%d_joint%d", i/3, i%3))
		m.Position = append(m.Position, float64(i)*0.1)
		m.Velocity = append(m.Velocity, float64(i)*0.01)
		m.Effort = append(m.Effort, float64(i))
	}
	return m
}

func benchGrid() *nav_msgs_msg.OccupancyGrid {
	m := nav_msgs_msg.NewOccupancyGrid()
	m.Info.Width, m.Info.Height, m.Info.Resolution = 1024, 1024, 0.05
	m.Data = make([]int8, 1024*1024)
	for i := range m.Data {
		m.Data[i] = int8(i%102) - 1
	}
	return m
}

func BenchmarkMarshalJointState(b *testing.B) {
	m := benchJointState()
	buf := rosidl.Marshal(m, nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = rosidl.Marshal(m, buf)
	}
}

func BenchmarkUnmarshalJointState(b *testing.B) {
	buf := rosidl.Marshal(benchJointState(), nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	var m sensor_msgs_msg.JointState
	for i := 0; i < b.N; i++ {
		if err := rosidl.Unmarshal(buf, &m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshalOccupancyGrid1MB(b *testing.B) {
	m := benchGrid()
	buf := rosidl.Marshal(m, nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = rosidl.Marshal(m, buf)
	}
}

func BenchmarkUnmarshalOccupancyGrid1MB(b *testing.B) {
	buf := rosidl.Marshal(benchGrid(), nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	var m nav_msgs_msg.OccupancyGrid
	for i := 0; i < b.N; i++ {
		if err := rosidl.Unmarshal(buf, &m); err != nil {
			b.Fatal(err)
		}
	}
}
