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
{{- end }}
