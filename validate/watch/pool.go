package watch

import (
	"math/bits"
	"sync"
)

// frameBuffers is the buffer pool of watch's connections (their HTTP/2
// DATA frames and the messages gRPC gathers from them): a free list per
// power of two that keeps at most budget bytes, whatever the garbage
// collector does.
//
// The connections' default pool (transport's, gRPC's tiers) is a
// sync.Pool per size, which keeps every buffer handed back until the
// second collection after. Collections are seconds apart in watch's
// steady state, so what the connections once had in flight at the same
// time stayed reachable, was marked live at the next collection and
// doubled into the heap's goal: 60 MiB of pooled frames in a 512-switch
// shard right after the initial burst (every switch's window full at once),
// a third of its live heap. With a bounded free list, the buffers of a
// burst beyond the budget are garbage as soon as they are read, and the
// steady state (a few switches' frames in flight) still allocates none
// (TestFrameBuffersBounded).
type frameBuffers struct {
	mu     sync.Mutex
	free   [nFrameTiers][]*[]byte
	kept   int // bytes in free
	budget int
}

const (
	minFrameTier = 8  // 256 B: gRPC pools nothing smaller (mem.IsBelowBufferPoolingThreshold)
	maxFrameTier = 20 // 1 MiB; larger buffers are not kept
	nFrameTiers  = maxFrameTier - minFrameTier + 1
	// frameBudget: 128 full 64 KiB windows, or 512 16 KiB frames.
	frameBudget = 8 << 20
)

func newFrameBuffers(budget int) *frameBuffers { return &frameBuffers{budget: budget} }

// tier is the free list a buffer of capacity n belongs to for Get (the
// smallest power of two >= n), -1 when none.
func frameTier(n int) int {
	if n <= 1<<minFrameTier {
		return 0
	}
	t := bits.Len(uint(n-1)) - minFrameTier
	if t >= nFrameTiers {
		return -1
	}
	return t
}

// Get returns a buffer of length n; its contents are undefined (gRPC
// writes every byte it reads: the frame's payload, the gathered message).
func (p *frameBuffers) Get(n int) *[]byte {
	t := frameTier(n)
	if t < 0 {
		b := make([]byte, n)
		return &b
	}
	p.mu.Lock()
	if l := len(p.free[t]); l > 0 {
		b := p.free[t][l-1]
		p.free[t][l-1] = nil
		p.free[t] = p.free[t][:l-1]
		p.kept -= cap(*b)
		p.mu.Unlock()
		*b = (*b)[:n]
		return b
	}
	p.mu.Unlock()
	b := make([]byte, n, 1<<(t+minFrameTier))
	return &b
}

// Put keeps a buffer for a later Get while the free lists hold less than
// the budget; otherwise it is left to the garbage collector.
func (p *frameBuffers) Put(b *[]byte) {
	c := cap(*b)
	t := frameTier(c)
	if t < 0 || c != 1<<(t+minFrameTier) {
		return // not one of ours (or a size Get never hands out)
	}
	p.mu.Lock()
	if p.kept+c <= p.budget {
		p.free[t] = append(p.free[t], b)
		p.kept += c
	}
	p.mu.Unlock()
}
