/**
 * Reading snapshot chunks from an S3-compatible object store: {@link
 * io.bloomoperator.watch.s3.S3ObjectStore}, registered with {@link
 * io.bloomoperator.watch.BloomFilterWatcher.Builder#objectStore}. The only reader-side package with
 * the AWS SDK; applications that read ConfigMaps only do not depend on this module.
 */
package io.bloomoperator.watch.s3;
