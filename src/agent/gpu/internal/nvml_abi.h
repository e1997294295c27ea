// The subset of NVML's C ABI (libnvidia-ml.so.1) that the NVML backend uses, declared here
// because Debian ships no nvml.h in main. Names, values and layouts follow NVIDIA's public
// nvml.h (CUDA 12.x); only what the backend resolves is declared. The test library
// (`agent/gpu/testing/fake_nvml.c`) implements the same functions from this header.
//
// Never link libnvidia-ml: the backend dlopen()s it and resolves these names.
//
// C and C++ (the test library is C, so that it links into a shared object without the
// static C++ runtime the rest of the build uses).
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlEventSet_st* nvmlEventSet_t;
typedef struct nvmlGpmSample_st* nvmlGpmSample_t;

// Return codes.
enum { NVML_SUCCESS = 0 };
enum { NVML_ERROR_UNINITIALIZED = 1 };
enum { NVML_ERROR_INVALID_ARGUMENT = 2 };
enum { NVML_ERROR_NOT_SUPPORTED = 3 };
enum { NVML_ERROR_NO_PERMISSION = 4 };
enum { NVML_ERROR_NOT_FOUND = 6 };
enum { NVML_ERROR_INSUFFICIENT_SIZE = 7 };
enum { NVML_ERROR_DRIVER_NOT_LOADED = 9 };
enum { NVML_ERROR_TIMEOUT = 10 };
enum { NVML_ERROR_GPU_IS_LOST = 15 };
enum { NVML_ERROR_UNKNOWN = 999 };

// Buffer sizes.
enum { NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96 };
enum { NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96 };
enum { NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80 };
enum { NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32 };
enum { NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16 };
enum { NVML_NVLINK_MAX_LINKS = 18 };

// Enumerations (plain ints in the ABI).
enum { NVML_TEMPERATURE_GPU = 0 };
enum { NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1 };
enum { NVML_VOLATILE_ECC = 0 };
enum { NVML_AGGREGATE_ECC = 1 };
enum { NVML_FEATURE_ENABLED = 1 };  // nvmlEnableState_t
enum { NVML_DEVICE_MIG_ENABLE = 1 };
enum { NVML_CLOCK_SM = 1 };  // nvmlClockType_t
enum { NVML_CLOCK_MEM = 2 };
enum { NVML_FI_DEV_MEMORY_TEMP = 82 };  // a field id (nvmlDeviceGetFieldValues)
enum { NVML_VALUE_TYPE_DOUBLE = 0 };    // nvmlValueType_t
enum { NVML_VALUE_TYPE_UNSIGNED_INT = 1 };
enum { NVML_VALUE_TYPE_UNSIGNED_LONG = 2 };
enum { NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3 };
enum { NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4 };
enum { NVML_VALUE_TYPE_SIGNED_INT = 5 };
#define nvmlEventTypeXidCriticalError 0x0000000000000008ULL

typedef struct nvmlMemory_st {
  unsigned long long total;  // bytes
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlUtilization_st {
  unsigned int gpu;  // percent of time a kernel ran over the last sample period
  unsigned int memory;
} nvmlUtilization_t;

typedef struct nvmlPciInfo_st {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];  // "00000000:3B:00.0"
} nvmlPciInfo_t;

typedef struct nvmlEventData_st {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // the XID for nvmlEventTypeXidCriticalError
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlEventData_t;

typedef union nvmlValue_st {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
} nvmlValue_t;

typedef struct nvmlFieldValue_st {
  unsigned int fieldId;  // NVML_FI_*, set by the caller
  unsigned int scopeId;
  long long timestamp;  // microseconds since 1970
  long long latencyUsec;
  int valueType;  // NVML_VALUE_TYPE_*
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
} nvmlFieldValue_t;

// GPU Performance Monitoring (GPM; Hopper and later): metrics over the interval between two
// samples of a GPU. Percentages 0-100.
enum { NVML_GPM_METRIC_GRAPHICS_UTIL = 1 };
enum { NVML_GPM_METRIC_SM_UTIL = 2 };
enum { NVML_GPM_METRIC_SM_OCCUPANCY = 3 };
enum { NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5 };
enum { NVML_GPM_METRIC_DRAM_BW_UTIL = 10 };
enum { NVML_GPM_METRICS_GET_VERSION = 1 };
enum { NVML_GPM_SUPPORT_VERSION = 1 };
// nvml.h sizes `metrics` by NVML_GPM_METRIC_MAX, which grew between releases (98 in CUDA
// 12.0); the library reads and writes only the first `numMetrics`, so the smallest released
// size is enough.
enum { CORRAL_NVML_GPM_METRICS = 98 };

typedef struct nvmlGpmMetric_st {
  unsigned int metricId;    // NVML_GPM_METRIC_*, set by the caller
  nvmlReturn_t nvmlReturn;  // this metric's status
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
} nvmlGpmMetric_t;

typedef struct nvmlGpmMetricsGet_st {
  unsigned int version;  // NVML_GPM_METRICS_GET_VERSION
  unsigned int numMetrics;
  nvmlGpmSample_t sample1;
  nvmlGpmSample_t sample2;
  nvmlGpmMetric_t metrics[CORRAL_NVML_GPM_METRICS];
} nvmlGpmMetricsGet_t;

typedef struct nvmlGpmSupport_st {
  unsigned int version;  // NVML_GPM_SUPPORT_VERSION
  unsigned int isSupportedDevice;
} nvmlGpmSupport_t;

// The entry points, as function pointer types (the backend's table) and, for the test
// library, as declarations.
#define CORRAL_NVML_FUNCTIONS(X)                                                                \
  X(nvmlInit_v2, (void))                                                                        \
  X(nvmlShutdown, (void))                                                                       \
  X(nvmlSystemGetDriverVersion, (char* version, unsigned int length))                           \
  X(nvmlSystemGetCudaDriverVersion_v2, (int* version))                                          \
  X(nvmlDeviceGetCount_v2, (unsigned int* count))                                               \
  X(nvmlDeviceGetHandleByIndex_v2, (unsigned int index, nvmlDevice_t* device))                  \
  X(nvmlDeviceGetUUID, (nvmlDevice_t device, char* uuid, unsigned int length))                  \
  X(nvmlDeviceGetName, (nvmlDevice_t device, char* name, unsigned int length))                  \
  X(nvmlDeviceGetMinorNumber, (nvmlDevice_t device, unsigned int* minor))                       \
  X(nvmlDeviceGetMemoryInfo, (nvmlDevice_t device, nvmlMemory_t * memory))                      \
  X(nvmlDeviceGetPciInfo_v3, (nvmlDevice_t device, nvmlPciInfo_t * pci))                        \
  X(nvmlDeviceGetNvLinkState, (nvmlDevice_t device, unsigned int link, int* is_active))         \
  X(nvmlDeviceGetNvLinkRemotePciInfo_v2,                                                        \
    (nvmlDevice_t device, unsigned int link, nvmlPciInfo_t* pci))                               \
  X(nvmlDeviceGetMigMode, (nvmlDevice_t device, unsigned int* current, unsigned int* pending))  \
  X(nvmlDeviceGetMaxMigDeviceCount, (nvmlDevice_t device, unsigned int* count))                 \
  X(nvmlDeviceGetMigDeviceHandleByIndex,                                                        \
    (nvmlDevice_t device, unsigned int index, nvmlDevice_t* mig))                               \
  X(nvmlDeviceGetUtilizationRates, (nvmlDevice_t device, nvmlUtilization_t * utilization))      \
  X(nvmlDeviceGetPowerUsage, (nvmlDevice_t device, unsigned int* milliwatts))                   \
  X(nvmlDeviceGetTemperature, (nvmlDevice_t device, int sensor, unsigned int* celsius))         \
  X(nvmlDeviceGetTotalEnergyConsumption, (nvmlDevice_t device, unsigned long long* mj))         \
  X(nvmlDeviceGetTotalEccErrors,                                                                \
    (nvmlDevice_t device, int error_type, int counter_type, unsigned long long* count))         \
  X(nvmlDeviceGetRemappedRows,                                                                  \
    (nvmlDevice_t device, unsigned int* corr_rows, unsigned int* unc_rows,                      \
     unsigned int* is_pending, unsigned int* failure_occurred))                                 \
  X(nvmlEventSetCreate, (nvmlEventSet_t * set))                                                 \
  X(nvmlDeviceRegisterEvents,                                                                   \
    (nvmlDevice_t device, unsigned long long event_types, nvmlEventSet_t set))                  \
  X(nvmlEventSetWait_v2, (nvmlEventSet_t set, nvmlEventData_t * data, unsigned int timeout_ms)) \
  X(nvmlEventSetFree, (nvmlEventSet_t set))                                                     \
  X(nvmlDeviceGetGpuInstanceId, (nvmlDevice_t device, unsigned int* id))                        \
  X(nvmlDeviceGetComputeInstanceId, (nvmlDevice_t device, unsigned int* id))                    \
  X(nvmlDeviceGetClockInfo, (nvmlDevice_t device, int type, unsigned int* mhz))                 \
  X(nvmlDeviceGetPcieReplayCounter, (nvmlDevice_t device, unsigned int* value))                 \
  X(nvmlDeviceGetFieldValues, (nvmlDevice_t device, int count, nvmlFieldValue_t* values))       \
  X(nvmlGpmQueryDeviceSupport, (nvmlDevice_t device, nvmlGpmSupport_t * support))               \
  X(nvmlGpmSampleAlloc, (nvmlGpmSample_t * sample))                                             \
  X(nvmlGpmSampleFree, (nvmlGpmSample_t sample))                                                \
  X(nvmlGpmSampleGet, (nvmlDevice_t device, nvmlGpmSample_t sample))                            \
  X(nvmlGpmMetricsGet, (nvmlGpmMetricsGet_t * metrics))                                        \
  X(nvmlGpmMigSampleGet,                                                                        \
    (nvmlDevice_t device, unsigned int gpu_instance, nvmlGpmSample_t sample))

#define CORRAL_NVML_DECLARE(name, args) nvmlReturn_t name args;
CORRAL_NVML_FUNCTIONS(CORRAL_NVML_DECLARE)
#undef CORRAL_NVML_DECLARE

// nvmlErrorString returns a string, not a code.
const char* nvmlErrorString(nvmlReturn_t result);

#ifdef __cplusplus
}  // extern "C"
#endif
