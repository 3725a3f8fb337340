"""The built-in mapping (the same text as deploy/prometheus/causeline-mapping.yml)."""

DEFAULT_MAPPING_YAML = r"""
# causeline: which metrics come from Prometheus, and how (docs/prometheus.md).
# Every vocabulary metric named here (under `metrics` or `passthrough`) is read
# from the Prometheus-compatible server at CAUSELINE_PROMETHEUS_URL; every other
# metric is read from causeline's own store.
version: 1
# The server's limit on points per series in one range query (Prometheus: 11,000;
# VictoriaMetrics: -search.maxPointsPerTimeseries, 30,000 by default).
max_points: 11000
# Query resolution when the caller gives none; about your scrape interval.
step_seconds: 15

metrics:
  # NVIDIA DCGM exporter (one series per GPU; labels gpu, Hostname, UUID, modelName, ...).
  gpu_utilization_percent:
    query: DCGM_FI_DEV_GPU_UTIL
    labels: {gpu: gpu, host: Hostname}
  gpu_memory_used_bytes:
    query: DCGM_FI_DEV_FB_USED
    labels: {gpu: gpu, host: Hostname}
    scale: 1048576 # MiB -> bytes
  gpu_temperature_celsius:
    query: DCGM_FI_DEV_GPU_TEMP
    labels: {gpu: gpu, host: Hostname}
  gpu_power_watts:
    query: DCGM_FI_DEV_POWER_USAGE
    labels: {gpu: gpu, host: Hostname}
  gpu_sm_clock_mhz:
    query: DCGM_FI_DEV_SM_CLOCK
    labels: {gpu: gpu, host: Hostname}
  gpu_xid_errors: # the last XID the driver reported (0: none); 79 = fallen off the bus
    query: DCGM_FI_DEV_XID_ERRORS
    labels: {gpu: gpu, host: Hostname}

  # Prometheus node-exporter; host is the scrape target without its port.
  node_cpu_utilization_percent:
    query: 100 * (1 - avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[1m])))
    labels:
      host: {from: instance, regex: '\[?(.*?)\]?:[0-9]+', replacement: '\1'}
  node_memory_used_bytes:
    query: node_memory_MemTotal_bytes - node_memory_MemAvailable_bytes
    labels:
      host: {from: instance, regex: '\[?(.*?)\]?:[0-9]+', replacement: '\1'}
  node_disk_io_utilization_percent:
    query: 100 * max by (instance) (rate(node_disk_io_time_seconds_total[1m]))
    labels:
      host: {from: instance, regex: '\[?(.*?)\]?:[0-9]+', replacement: '\1'}
  node_network_receive_bytes_per_second:
    query: sum by (instance) (rate(node_network_receive_bytes_total{device!="lo"}[1m]))
    labels:
      host: {from: instance, regex: '\[?(.*?)\]?:[0-9]+', replacement: '\1'}
  node_network_transmit_bytes_per_second:
    query: sum by (instance) (rate(node_network_transmit_bytes_total{device!="lo"}[1m]))
    labels:
      host: {from: instance, regex: '\[?(.*?)\]?:[0-9]+', replacement: '\1'}

# Already named in the vocabulary (model servers instrumented with causeline's probe,
# or recording rules): read as they are, every label kept except `job`.
passthrough:
  - model_requests_per_second
  - model_latency_p50_ms
  - model_latency_p95_ms
  - model_latency_p99_ms
  - model_batch_size_mean
  - model_queue_length
  - model_error_rate
  - model_timeout_rate
  - model_fallback_rate
  - model_input_length_bucket
  - model_score_bucket
  - model_ctr
  - feature_service_latency_p99_ms
  - feature_service_requests_per_second
  - feature_service_error_rate
"""
