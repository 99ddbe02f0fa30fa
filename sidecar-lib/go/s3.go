package reader

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// S3Config is where an S3-compatible store (AWS S3, Ceph RGW, GCS's XML API, versitygw, ...) is and
// how to read it: the application's own configuration, never a manifest's. The same options as the
// Java reader's S3ObjectStore.
type S3Config struct {
	// Endpoint is the store's http(s) URL, e.g. https://s3.eu-west-1.amazonaws.com; plain http only
	// for a store on the same host. Required.
	Endpoint string
	// Bucket is the bucket the operator's store writes to. Required.
	Bucket string
	// Prefix is the key prefix as the operator's BloomStore has it (the operator's default is
	// "bloom"); "" for none.
	Prefix string
	// Region requests are signed for; default us-east-1.
	Region string
	// VirtualHostStyle addresses bucket.host/key instead of the default host/bucket/key.
	VirtualHostStyle bool
	// Credentials are read before every request; nil means EnvironmentCredentials (the standard
	// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN variables).
	Credentials S3Credentials
	// CAFile, when set, is a PEM bundle whose CAs verify the store's certificate instead of the
	// system's (e.g. the BloomStore's spec.tls.caBundle mounted from a ConfigMap); read once.
	CAFile string
	// ConnectTimeout (default 5 s) bounds connecting; ReadTimeout (default 30 s) one GET's answer.
	ConnectTimeout, ReadTimeout time.Duration
	// Attempts at a chunk that fail without receiving a byte before the load fails (default 4); an
	// attempt that received bytes resumes from there and does not count.
	Attempts int
}

// S3Credentials returns the access key pair (and a session token, or "") to sign one request.
type S3Credentials func() (accessKeyID, secretAccessKey, sessionToken string, err error)

// StaticCredentials signs with one fixed key pair.
func StaticCredentials(accessKeyID, secretAccessKey string) S3Credentials {
	return func() (string, string, string, error) { return accessKeyID, secretAccessKey, "", nil }
}

// EnvironmentCredentials reads AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN.
func EnvironmentCredentials() S3Credentials {
	return func() (string, string, string, error) {
		id, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
		if id == "" || secret == "" {
			return "", "", "", errors.New("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not both set")
		}
		return id, secret, os.Getenv("AWS_SESSION_TOKEN"), nil
	}
}

// maxCredentialFileBytes is far above any access key or secret; it bounds what a wrong path reads.
const maxCredentialFileBytes = 4096

// AccessKeyFiles reads the key pair from two files, e.g. the keys of a Secret of the application's
// own namespace mounted as a volume. Read at every request: the kubelet replaces a mounted Secret's
// files when it changes, so rotated keys are used without a restart.
func AccessKeyFiles(accessKeyIDFile, secretAccessKeyFile string) S3Credentials {
	return func() (string, string, string, error) {
		id, err := readCredentialFile(accessKeyIDFile)
		if err != nil {
			return "", "", "", err
		}
		secret, err := readCredentialFile(secretAccessKeyFile)
		if err != nil {
			return "", "", "", err
		}
		return id, secret, "", nil
	}
}

func readCredentialFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		// The path is the application's configuration, not a secret; the content is never quoted.
		return "", fmt.Errorf("cannot read credentials file %s: %w", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCredentialFileBytes+1))
	if err != nil {
		return "", fmt.Errorf("cannot read credentials file %s: %w", path, err)
	}
	if len(b) > maxCredentialFileBytes {
		return "", fmt.Errorf("credentials file %s is larger than %d bytes", path, maxCredentialFileBytes)
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return "", fmt.Errorf("credentials file %s is empty", path)
	}
	return v, nil
}

// S3Store reads chunk objects from an S3-compatible store with ranged GETs signed with AWS
// Signature Version 4: exactly the bytes the manifest announces, never more; a response that breaks
// off is resumed from the byte it reached; a total size other than the announced one fails the
// load; redirects are never followed (a store that redirects is unavailable, not followed to a
// host the configuration does not name). Safe for concurrent use.
type S3Store struct {
	cfg      S3Config
	base     *url.URL
	client   *http.Client
	describe string
	now      func() time.Time // the signing clock
}

var bucketName = regexp.MustCompile(`^[a-z0-9][-.a-z0-9]{1,61}[a-z0-9]$`)

// NewS3Store checks cfg and returns the store; register it in Config.ObjectStores under the name
// of the operator's store.
func NewS3Store(cfg S3Config) (*S3Store, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, errors.New("s3: endpoint must be an http or https URL with a host")
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return nil, errors.New("s3: endpoint must have no path, query or user")
	}
	u.Path = ""
	if !bucketName.MatchString(cfg.Bucket) {
		return nil, errors.New("s3: bucket must be an S3 bucket name (3-63 characters)")
	}
	if !IsStorePrefix(cfg.Prefix) {
		return nil, errors.New("s3: prefix must be '/'-separated segments of letters, digits, '-', '.' and '_'")
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.Credentials == nil {
		cfg.Credentials = EnvironmentCredentials()
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 5 * time.Second
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = 30 * time.Second
	}
	if cfg.Attempts <= 0 {
		cfg.Attempts = 4
	}
	if cfg.Attempts > 100 {
		return nil, errors.New("s3: attempts must be between 1 and 100")
	}
	transport := &http.Transport{
		// No proxy from the environment: the configured endpoint is the only host this talks to.
		DialContext:           (&net.Dialer{Timeout: cfg.ConnectTimeout}).DialContext,
		TLSHandshakeTimeout:   cfg.ConnectTimeout,
		ResponseHeaderTimeout: cfg.ReadTimeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("s3: cannot read CA bundle %s: %w", cfg.CAFile, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("s3: %s holds no PEM certificate", cfg.CAFile)
		}
		transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	client := &http.Client{
		Transport: transport,
		// A redirect could point anywhere: answered as the store's failure, never followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &S3Store{cfg: cfg, base: u, client: client, describe: u.Scheme + "://" + u.Host + " bucket " + cfg.Bucket, now: time.Now}, nil
}

// Prefix is the configured key prefix.
func (s *S3Store) Prefix() string { return s.cfg.Prefix }

// String names endpoint and bucket (never credentials).
func (s *S3Store) String() string {
	return "S3Store(" + s.describe + ", prefix '" + s.cfg.Prefix + "')"
}

// retryPause is a failed attempt's pause before the next, times the attempt's number.
const retryPause = 200 * time.Millisecond

// errNoSuchObject, *sizeMismatch and *partialRead are read's outcomes short of a whole chunk.
var errNoSuchObject = errors.New("no such object")

type sizeMismatch struct{ msg string }

func (e *sizeMismatch) Error() string { return e.msg }

// Get reads object key, announced as size bytes, with ranged GETs of what is still missing; nil
// when it does not exist.
func (s *S3Store) Get(ctx context.Context, key string, size int) ([]byte, error) {
	if size < 0 || size > MaxChunkBytes {
		return nil, newError(ReasonChunk, fmt.Sprintf("object %s announces %d bytes, more than a chunk holds", key, size))
	}
	data := make([]byte, size)
	if size == 0 {
		return data, nil
	}
	filled, failed, requests := 0, 0, 0
	// Attempts count only requests that brought nothing; a store that sends a little and breaks off
	// each time would otherwise be asked up to size times. Every request must bring 64 KiB on
	// average, beyond the attempts.
	maxRequests := s.cfg.Attempts + size/(64<<10) + 1
	for {
		before := filled
		n, err := s.read(ctx, key, data, filled)
		filled = n
		requests++
		var mismatch *sizeMismatch
		var e *Error
		switch {
		case err == nil:
			return data, nil
		case errors.Is(err, errNoSuchObject):
			return nil, nil
		case errors.As(err, &mismatch):
			return nil, newError(ReasonChunk, mismatch.msg)
		case errors.As(err, &e) && e.Reason == ReasonStoreDenied:
			return nil, err
		case ctx.Err() != nil:
			return nil, &Error{Reason: ReasonStoreUnavailable, Chunk: -1,
				msg: "fetch of " + key + " cancelled", cause: ctx.Err()}
		}
		if requests >= maxRequests {
			return nil, &Error{Reason: ReasonStoreUnavailable, Chunk: -1, cause: err, msg: printable(fmt.Sprintf(
				"object %s of %s: %d requests did not complete it: %v", key, s.describe, requests, err))}
		}
		if filled == before {
			failed++
			if failed >= s.cfg.Attempts {
				return nil, &Error{Reason: ReasonStoreUnavailable, Chunk: -1, cause: err, msg: printable(fmt.Sprintf(
					"object %s of %s: %d attempts failed: %v", key, s.describe, failed, err))}
			}
		}
		select {
		case <-ctx.Done():
			return nil, &Error{Reason: ReasonStoreUnavailable, Chunk: -1, msg: "fetch of " + key + " cancelled", cause: ctx.Err()}
		case <-time.After(retryPause * time.Duration(max(1, failed))):
		}
	}
}

// contentRange is "bytes <first>-<last>/<total or *>".
var contentRange = regexp.MustCompile(`^bytes (\d+)-(\d+)/(\d+|\*)$`)

// read is one GET of key from byte from to the announced end into data; it returns how much of
// data is filled (bytes that arrived before a break are kept).
func (s *S3Store) read(ctx context.Context, key string, data []byte, from int) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout+s.cfg.ReadTimeout)
	defer cancel()
	req, err := s.request(ctx, key, fmt.Sprintf("bytes=%d-%d", from, len(data)-1))
	if err != nil {
		return from, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return from, err
	}
	// Closed without draining: what the store sends beyond the announced range is never read.
	defer resp.Body.Close()
	what := fmt.Sprintf("object %s of %s: HTTP %d", key, s.describe, resp.StatusCode)
	switch resp.StatusCode {
	case http.StatusPartialContent:
		m := contentRange.FindStringSubmatch(strings.TrimSpace(resp.Header.Get("Content-Range")))
		if m == nil {
			return from, errors.New(what + ": no usable Content-Range")
		}
		if m[3] != "*" {
			if total, err := strconv.ParseInt(m[3], 10, 64); err != nil || total != int64(len(data)) {
				return from, &sizeMismatch{fmt.Sprintf("object %s is %s bytes, the manifest announces %d", key, m[3], len(data))}
			}
		}
		if first, _ := strconv.ParseInt(m[1], 10, 64); first != int64(from) {
			return from, errors.New(what + ": the range starts at another byte than asked")
		}
	case http.StatusOK:
		// A store that ignores Range sends the whole object: its length must be the announced one,
		// and it is read again from the start.
		if resp.ContentLength >= 0 && resp.ContentLength != int64(len(data)) {
			return from, &sizeMismatch{fmt.Sprintf("object %s is %d bytes, the manifest announces %d", key, resp.ContentLength, len(data))}
		}
		from = 0
	case http.StatusNotFound:
		return from, errNoSuchObject
	case http.StatusRequestedRangeNotSatisfiable:
		return from, &sizeMismatch{what + " (shorter than the manifest announces)"}
	case http.StatusUnauthorized, http.StatusForbidden:
		return from, newError(ReasonStoreDenied, what+errorCode(resp.Body)+": the reader's credentials may not read it")
	default:
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			return from, errors.New(what + ": redirects are not followed")
		}
		return from, errors.New(what + errorCode(resp.Body))
	}
	n, err := io.ReadFull(resp.Body, data[from:])
	if err != nil {
		return from + n, fmt.Errorf("response broke off at byte %d: %w", from+n, err)
	}
	return len(data), nil
}

var s3ErrorCode = regexp.MustCompile(`<Code>([A-Za-z0-9.]{1,64})</Code>`)

// errorCode is " <Code>" of an S3 error body (at most 4 KiB read), or "".
func errorCode(body io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(body, 4096))
	if m := s3ErrorCode.FindSubmatch(b); m != nil {
		return " " + string(m[1])
	}
	return ""
}

// emptySHA256 is the SHA-256 of an empty body: a GET's payload hash.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// request builds the signed ranged GET of key (AWS Signature Version 4, header form).
func (s *S3Store) request(ctx context.Context, key, byteRange string) (*http.Request, error) {
	id, secret, token, err := s.cfg.Credentials()
	if err != nil {
		return nil, newError(ReasonStoreDenied, "no credentials to read object store "+s.describe+": "+err.Error())
	}
	host := s.base.Host
	path := "/" + s.cfg.Bucket + "/" + uriEncode(key)
	if s.cfg.VirtualHostStyle {
		host = s.cfg.Bucket + "." + host
		path = "/" + uriEncode(key)
	}
	// Keys are made of [a-zA-Z0-9._/-] (ObjectKey): the path goes out exactly as signed.
	u := &url.URL{Scheme: s.base.Scheme, Host: host, Path: path}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Host = host
	now := s.now().UTC()
	amzDate := now.Format("20060102T150405Z")
	headers := map[string]string{
		"host":                 host,
		"range":                byteRange,
		"x-amz-content-sha256": emptySHA256,
		"x-amz-date":           amzDate,
	}
	if token != "" {
		headers["x-amz-security-token"] = token
	}
	names := make([]string, 0, len(headers))
	for k := range headers {
		names = append(names, k)
	}
	sort.Strings(names)
	var canonicalHeaders strings.Builder
	for _, k := range names {
		canonicalHeaders.WriteString(k + ":" + strings.TrimSpace(headers[k]) + "\n")
		if k != "host" {
			req.Header.Set(k, headers[k])
		}
	}
	signed := strings.Join(names, ";")
	canonical := strings.Join([]string{http.MethodGet, path, "", canonicalHeaders.String(), signed, emptySHA256}, "\n")
	day := now.Format("20060102")
	scope := day + "/" + s.cfg.Region + "/s3/aws4_request"
	digest := sha256.Sum256([]byte(canonical))
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(digest[:])
	k := hmacSHA256([]byte("AWS4"+secret), day)
	k = hmacSHA256(k, s.cfg.Region)
	k = hmacSHA256(k, "s3")
	k = hmacSHA256(k, "aws4_request")
	signature := hex.EncodeToString(hmacSHA256(k, toSign))
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+id+"/"+scope+
		", SignedHeaders="+signed+", Signature="+signature)
	return req, nil
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

// uriEncode percent-encodes everything but unreserved characters and '/', as SigV4 asks for S3
// object keys (encoded once).
func uriEncode(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
			c == '-' || c == '_' || c == '.' || c == '~' || c == '/' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
