/**
 * Change streams: what a filter learns between full builds ({@code spec.changes}). A stream is read
 * from the position the published version records, its adds are applied to the bits this operator
 * keeps for the filter, and the result is published as a delta through the same plan, budgets and
 * signatures as a build. The Kafka client is confined by {@link
 * io.bloomoperator.changes.ConnectGuard}: it connects only where the egress policy allows, whatever
 * the cluster metadata advertises.
 */
package io.bloomoperator.changes;
