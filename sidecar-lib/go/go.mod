module bloomoperator.io/reader

go 1.22

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/spaolacci/murmur3 v1.1.0
)
