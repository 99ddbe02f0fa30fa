{{/*
Names. With the release named bloom-operator (as the README installs it) every object has the
name the kustomize install gives it.
*/}}
{{- define "bloom-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 52 | trimSuffix "-" }}
{{- end }}

{{- define "bloom-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "bloom-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "bloom-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "bloom-operator.labels" -}}
{{ include "bloom-operator.selectorLabels" . }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The operator's ServiceAccount, as an RBAC subject. */}}
{{- define "bloom-operator.subject" -}}
- kind: ServiceAccount
  name: {{ include "bloom-operator.fullname" . }}
  namespace: {{ .Release.Namespace }}
{{- end }}

{{/*
What the operator needs where it reconciles BloomFilters: granted by the ClusterRole of the
cluster-wide install or by a Role in each watched namespace, from this one list (the same rules
as deploy/operator-rbac.yaml; HelmRbacEqualityTest compares them).
*/}}
{{- define "bloom-operator.rules" -}}
# Reconcile BloomFilters and write their status.
- apiGroups: ["bloomoperator.io"]
  resources: ["bloomfilters"]
  verbs: ["get", "list", "watch", "patch", "update"]
- apiGroups: ["bloomoperator.io"]
  resources: ["bloomfilters/status"]
  verbs: ["get", "patch", "update"]
# Snapshot ConfigMaps: watch manifests (label-selected watch, nothing cached), create chunks and
# manifests, update manifests, delete retired chunks (listed by label, deleted by name when the
# filter controls them); read ConfigMap sources.
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get", "list", "watch", "create", "update", "delete"]
# Secret sources are read by name only.
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get"]
# Events about BloomFilters (kubectl describe / get events).
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create"]
# Reader reports (docs/reader-protocol.md): Leases labelled bloomoperator.io/role=reader-report,
# listed and watched by label (only the parsed report is kept, nothing cached whole), and the
# pod each names, read by name so that only reports of live pods count.
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["list", "watch"]
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get"]
{{- end }}

{{/* The operator image: by digest when one is given (the tag is then ignored), else by tag. */}}
{{- define "bloom-operator.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end }}

{{/*
The environment variables templates/deployment.yaml sets itself. An extraEnv entry of the same
name would silently win over the value the schema checked (Kubernetes keeps the last of duplicate
names), so it is refused. HelmChartTest keeps this list equal to what the template sets.
*/}}
{{- define "bloom-operator.chartEnv" -}}
POD_NAMESPACE POD_NAME BLOOM_LEADER_ELECTION LOG_FORMAT BLOOM_MAX_SNAPSHOT_BYTES
BLOOM_MAX_STORE_SNAPSHOT_BYTES BLOOM_MAX_NAMESPACE_BYTES BLOOM_MAX_CONCURRENT_BUILDS BLOOM_BUILD_THREADS
BLOOM_PUBLISH_WRITERS
BLOOM_MIN_PUBLISH_INTERVAL
BLOOM_MAX_NAMESPACE_WRITE_BYTES_PER_HOUR BLOOM_MAX_FILTER_WRITE_BYTES_PER_HOUR
BLOOM_MAX_CHUNKS_PER_VERSION BLOOM_SOURCE_STALL_TIMEOUT BLOOM_MAX_BUILD_TIME
BLOOM_MAX_BUILDS_PER_NAMESPACE BLOOM_STORE_CLEANUP_TIMEOUT BLOOM_STORE_ALLOW BLOOM_STORE_DENY
BLOOM_READER_STATUS_INTERVAL BLOOM_STORE_NAMESPACE_UPLOAD_BYTES_PER_HOUR
BLOOM_MAX_READER_REPORTS_PER_NAMESPACE BLOOM_ROLLOUT_STALL_AFTER BLOOM_READER_POD_CHECK_INTERVAL
BLOOM_SECRET_ACCESS BLOOM_HTTP_ALLOW BLOOM_HTTP_DENY
BLOOM_HTTP_MAX_LINE_BYTES BLOOM_HTTP_MAX_BODY_BYTES BLOOM_HTTP_MAX_READ_TIME
BLOOM_HTTP_PARTITION_CONNECTIONS BLOOM_HTTP_PARTITION_CONNECTIONS_PER_NAMESPACE
BLOOM_JDBC_PARTITION_CONNECTIONS BLOOM_JDBC_PARTITION_CONNECTIONS_PER_NAMESPACE
BLOOM_JDBC_MAX_VALUE_BYTES BLOOM_JDBC_MAX_BATCH_BYTES BLOOM_JDBC_MAX_FETCH_SIZE
BLOOM_JDBC_MAX_QUERY_TIME JAVA_TOOL_OPTIONS BLOOM_WATCH_NAMESPACES BLOOM_SIGNING_KEY_SECRET
BLOOM_STREAM_DIR BLOOM_STREAM_HELD_BYTES BLOOM_STREAM_NAMESPACE_HELD_BYTES BLOOM_STREAM_COUNTING_BYTES
BLOOM_STREAM_NAMESPACE_COUNTING_BYTES
{{- end }}

{{/*
The stream volume's sizeLimit: what the operator may keep there (held payloads and counting
shadows, each bounded by its budget) and 64 MiB for the small files beside them (manifest digests)
and file-system slack; operator.stream.dirSizeLimit replaces it.
*/}}
{{- define "bloom-operator.streamDirSizeLimit" -}}
{{- $s := .Values.operator.stream -}}
{{- if $s.dirSizeLimit -}}
{{ $s.dirSizeLimit }}
{{- else -}}
{{ printf "%dMi" (div (add $s.heldBytes $s.countingBytes 67108864 1048575) 1048576) }}
{{- end -}}
{{- end }}

{{- define "bloom-operator.checkExtraEnv" -}}
{{- $reserved := include "bloom-operator.chartEnv" . | splitList "\n" | join " " | splitList " " }}
{{- range .Values.extraEnv }}
{{- if has .name $reserved }}
{{- fail (printf "extraEnv: %s is set by the chart; use its value in values.yaml instead (JVM flags: operator.javaToolOptions)" .name) }}
{{- end }}
{{- end }}
{{- end }}

{{/* The reader Role and RoleBinding of readers, one per namespace and release. */}}
{{- define "bloom-operator.readerName" -}}
{{- include "bloom-operator.fullname" . }}-reader
{{- end }}
