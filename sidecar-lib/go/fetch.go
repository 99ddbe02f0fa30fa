package reader

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
)

// DefaultFetchParallelism is how many chunks a reader fetches at once unless
// Config.FetchParallelism says otherwise.
const DefaultFetchParallelism = 4

// MaxFetchParallelism is the most Config.FetchParallelism may be: chunks in flight are held in
// memory (each at most MaxChunkBytes, so 16 MiB beside the filter being built, plus the bodies of
// ConfigMap GETs being decoded) and each is a request the API server or store serves at once.
const MaxFetchParallelism = 16

// fetched is one chunk's bytes, checked, or why not.
type fetched struct {
	data []byte
	err  error
}

// fetchChunks hands each chunk of refs to use, in order, after checking it (present, announced
// size, SHA-256), with up to parallel chunks fetched at once. A chunk's fetch starts only when it
// is fewer than parallel places ahead of the one used next, so at most parallel chunks are held,
// each no larger than the limits let a chunk announce. The first failure (a fetch, a check, or
// use) cancels the fetches under way and is returned; with parallel 1 it is the sequential loop.
// where names chunk i in errors.
func fetchChunks(ctx context.Context, refs []ChunkRef, src chunkSource, parallel int,
	where func(int) string, use func(i int, data []byte) error) error {
	if parallel <= 1 || len(refs) <= 1 {
		digest := sha256.New()
		for i, ref := range refs {
			data, err := src(ctx, ref)
			if err != nil {
				return err
			}
			if err := checkChunk(ref, data, where(i), i, digest); err != nil {
				return err
			}
			if err := use(i, data); err != nil {
				return err
			}
		}
		return nil
	}
	inner, cancel := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel(nil) // the fetches still under way stop; none outlives the load
		wg.Wait()
	}()
	results := make([]chan fetched, len(refs))
	started := 0
	for i := range refs {
		for ; started < len(refs) && started < i+parallel; started++ {
			results[started] = make(chan fetched, 1)
			wg.Add(1)
			go func(j int) {
				defer wg.Done()
				data, err := src(inner, refs[j])
				if err == nil {
					err = checkChunk(refs[j], data, where(j), j, sha256.New())
				}
				if err != nil {
					cancel(err) // only the first cause is kept
					data = nil
				}
				results[j] <- fetched{data, err}
			}(started)
		}
		r := <-results[i]
		results[i] = nil
		if r.err != nil {
			// A fetch failed because another's failure cancelled it: report that one. Without a
			// cause of ours (the caller's ctx ended), the chunk's own error.
			if cause := context.Cause(inner); cause != nil && ctx.Err() == nil {
				return cause
			}
			return r.err
		}
		if err := use(i, r.data); err != nil {
			return err
		}
	}
	return nil
}

// fetchParallelism checks Config.FetchParallelism: 0 is the default.
func fetchParallelism(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultFetchParallelism, nil
	case n < 1 || n > MaxFetchParallelism:
		return 0, fmt.Errorf("reader: fetch parallelism must be 1..%d, got %d", MaxFetchParallelism, n)
	}
	return n, nil
}
