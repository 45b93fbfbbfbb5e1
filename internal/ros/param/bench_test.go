package param

import (
	"strconv"
	"testing"
)

func BenchmarkStore_SetAtomically(b *testing.B) {
	s := NewStore(StoreOptions{OnEvent: func(Event) {}})
	s.OnSet(func([]Parameter) error { return nil })
	if _, err := s.Declare("rate", DoubleValue(1), Descriptor{FloatRange: &FloatRange{From: 0, To: 1e9}}); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		if err := s.SetValue("rate", DoubleValue(float64(i%1000))); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStore_List100(b *testing.B) {
	s := NewStore(StoreOptions{})
	for i := 0; i < 100; i++ {
		if _, err := s.Declare("group"+strconv.Itoa(i%10)+".p"+strconv.Itoa(i), IntegerValue(1), Descriptor{}); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < b.N; i++ {
		s.List([]string{"group3"}, DepthRecursive)
	}
}

func BenchmarkParseFile_Good(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := ParseFile("testdata/good.yaml"); err != nil {
			b.Fatal(err)
		}
	}
}
