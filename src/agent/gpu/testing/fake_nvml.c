// A fake libnvidia-ml for tests: implements the subset of NVML's C ABI that the NVML backend
// uses (agent/gpu/internal/nvml_abi.h) over fake GPUs described in a text file, so that the
// backend's dlopen path, symbol table, discovery, sampling and XID events are tested without
// NVIDIA hardware. Built as a shared library and loaded by path.
//
// The file named by $CORRAL_FAKE_NVML is read at nvmlInit_v2 (the GPUs) and again at every
// sampling call (the readings), so a test changes readings or injects faults by rewriting
// it. One statement per line, '#' starts a comment:
//
//   driver 550.54.15                 nvmlSystemGetDriverVersion
//   cuda 12040                       nvmlSystemGetCudaDriverVersion_v2 (12.4)
//   gpu NAME|UUID|BUS_ID|MINOR|MEMORY_MB|NVLINK
//       NVLINK: "switch" (every link to an NVSwitch), "-" (none), or peer GPU indices "1,3"
//   mig PARENT|NAME|UUID|MEMORY_MB|GI|CI   a MIG device of GPU PARENT (MIG mode on)
//   util GPU PERCENT / mem GPU MB / power GPU WATTS / temp GPU C / energy GPU JOULES
//   ecc GPU COUNT / remapfail GPU 0|1 / remappending GPU 0|1 / lost GPU
//   smclock GPU MHZ / memclock GPU MHZ / memtemp GPU C / replays GPU COUNT
//                                    (without them those calls answer NOT_SUPPORTED)
//   gpm GPU GR SM OCC TENSOR DRAM    GPM percentages (without one the GPU has no GPM);
//                                    a metric over two samples is the later sample's value
//   gpmmig GPU GI GR SM OCC TENSOR DRAM  GPM percentages of GPU's MIG GPU instance GI, read by
//                                    nvmlGpmMigSampleGet (the GPU also needs its `gpm` line)
//   xid GPU XID                      delivered once, in file order, by nvmlEventSetWait_v2
//                                    (after corral_fake_nvml_notify, or at its next call)
//   fail_init CODE                   nvmlInit_v2 returns CODE
//
// Thread-safe enough for the backend: one mutex around everything.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/gpu/internal/nvml_abi.h"

#define MAX_GPUS 16
#define MAX_MIGS 8
#define MAX_LINE 512

struct fake_mig {
  char name[96], uuid[96];
  unsigned long long memory_mb;
  unsigned gi, ci;
  int used;
  int gpm;            // GPM percentages given for its GPU instance (a reading)
  double gpm_pct[5];
};

struct nvmlDevice_st {
  int index;  // physical GPU index
  int mig;    // -1 for the GPU itself, else the MIG device index
};

struct fake_gpu {
  char name[96], uuid[96], bus[32];
  unsigned minor;
  unsigned long long memory_mb;
  char nvlink[64];
  struct fake_mig migs[MAX_MIGS];
  int nmig;
  // Readings (re-read at every sampling call).
  unsigned util, temp, lost, remap_fail, remap_pending;
  unsigned long long mem_used_mb, ecc, energy_j;
  double power_w;
  // 0 = not supported (the statement is absent).
  unsigned sm_clock, mem_clock, mem_temp, has_replays, replays;
  int gpm;             // GPM supported
  double gpm_pct[5];   // graphics, SM, occupancy, tensor, DRAM (percent)
  struct nvmlDevice_st handle;
  struct nvmlDevice_st mig_handles[MAX_MIGS];
};

struct nvmlEventSet_st {
  int registered[MAX_GPUS];
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct fake_gpu gpus[MAX_GPUS];
static int ngpus;
static int initialised;
static char driver[80] = "550.54.15";
static int cuda = 12040;
static int xids_delivered;  // how many `xid` lines were delivered
// How many of them the caller has handled: it has come back to nvmlEventSetWait_v2 since.
static int xids_handled;
static pthread_cond_t events_cond;  // notify, or xids_handled moved (CLOCK_MONOTONIC)
static pthread_once_t events_once = PTHREAD_ONCE_INIT;

static void InitEventsCond(void) {
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&events_cond, &attr);
  pthread_condattr_destroy(&attr);
}

// `ms` milliseconds from now on CLOCK_MONOTONIC.
static struct timespec Deadline(unsigned ms) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  t.tv_sec += ms / 1000;
  t.tv_nsec += (long)(ms % 1000) * 1000000L;
  if (t.tv_nsec >= 1000000000L) {
    t.tv_sec += 1;
    t.tv_nsec -= 1000000000L;
  }
  return t;
}

static const char* Path(void) { return getenv("CORRAL_FAKE_NVML"); }

// Splits `s` at '|' into at most `n` fields (in place).
static int Split(char* s, char** fields, int n) {
  int k = 0;
  while (k < n) {
    fields[k++] = s;
    char* bar = strchr(s, '|');
    if (bar == NULL) break;
    *bar = '\0';
    s = bar + 1;
  }
  return k;
}

static void Chomp(char* s) {
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ')) s[--n] = '\0';
}

// Reads the file: the inventory when `inventory`, else only the readings. Returns the
// fail_init code (0 if none). Requires mu.
static int Load(int inventory) {
  const char* path = Path();
  if (path == NULL) return NVML_ERROR_DRIVER_NOT_LOADED;
  FILE* f = fopen(path, "r");
  if (f == NULL) return NVML_ERROR_DRIVER_NOT_LOADED;
  if (inventory) {
    memset(gpus, 0, sizeof gpus);
    ngpus = 0;
  }
  for (int i = 0; i < ngpus; ++i) {
    struct fake_gpu* g = &gpus[i];
    g->util = g->temp = g->lost = g->remap_fail = g->remap_pending = 0;
    g->mem_used_mb = g->ecc = g->energy_j = 0;
    g->power_w = 0;
    g->temp = 30;
    g->sm_clock = g->mem_clock = g->mem_temp = g->has_replays = g->replays = 0;
    g->gpm = 0;
    for (int k = 0; k < g->nmig; ++k) g->migs[k].gpm = 0;
  }
  int fail = 0;
  char line[MAX_LINE];
  while (fgets(line, sizeof line, f) != NULL) {
    Chomp(line);
    if (line[0] == '#' || line[0] == '\0') continue;
    char* rest = strchr(line, ' ');
    if (rest == NULL) continue;
    *rest++ = '\0';
    unsigned gi = 0;
    double value = 0;
    if (strcmp(line, "fail_init") == 0) {
      fail = atoi(rest);
    } else if (strcmp(line, "driver") == 0 && inventory) {
      snprintf(driver, sizeof driver, "%s", rest);
    } else if (strcmp(line, "cuda") == 0 && inventory) {
      cuda = atoi(rest);
    } else if (strcmp(line, "gpu") == 0 && inventory && ngpus < MAX_GPUS) {
      char* v[6] = {0};
      if (Split(rest, v, 6) != 6) continue;
      struct fake_gpu* g = &gpus[ngpus];
      snprintf(g->name, sizeof g->name, "%s", v[0]);
      snprintf(g->uuid, sizeof g->uuid, "%s", v[1]);
      snprintf(g->bus, sizeof g->bus, "%s", v[2]);
      g->minor = (unsigned)atoi(v[3]);
      g->memory_mb = strtoull(v[4], NULL, 10);
      snprintf(g->nvlink, sizeof g->nvlink, "%s", v[5]);
      g->handle.index = ngpus;
      g->handle.mig = -1;
      g->temp = 30;
      ngpus++;
    } else if (strcmp(line, "mig") == 0 && inventory) {
      char* v[6] = {0};
      if (Split(rest, v, 6) != 6) continue;
      int parent = atoi(v[0]);
      if (parent < 0 || parent >= ngpus || gpus[parent].nmig >= MAX_MIGS) continue;
      struct fake_gpu* g = &gpus[parent];
      struct fake_mig* m = &g->migs[g->nmig];
      snprintf(m->name, sizeof m->name, "%s", v[1]);
      snprintf(m->uuid, sizeof m->uuid, "%s", v[2]);
      m->memory_mb = strtoull(v[3], NULL, 10);
      m->gi = (unsigned)atoi(v[4]);
      m->ci = (unsigned)atoi(v[5]);
      m->used = 1;
      g->mig_handles[g->nmig].index = parent;
      g->mig_handles[g->nmig].mig = g->nmig;
      g->nmig++;
    } else if (strcmp(line, "gpm") == 0) {
      double v[5] = {0};
      if (sscanf(rest, "%u %lf %lf %lf %lf %lf", &gi, &v[0], &v[1], &v[2], &v[3], &v[4]) == 6 &&
          gi < (unsigned)ngpus) {
        gpus[gi].gpm = 1;
        memcpy(gpus[gi].gpm_pct, v, sizeof v);
      }
    } else if (strcmp(line, "gpmmig") == 0) {
      unsigned instance = 0;
      double v[5] = {0};
      if (sscanf(rest, "%u %u %lf %lf %lf %lf %lf", &gi, &instance, &v[0], &v[1], &v[2], &v[3],
                 &v[4]) == 7 &&
          gi < (unsigned)ngpus) {
        for (int k = 0; k < gpus[gi].nmig; ++k) {
          if (gpus[gi].migs[k].gi != instance) continue;
          gpus[gi].migs[k].gpm = 1;
          memcpy(gpus[gi].migs[k].gpm_pct, v, sizeof v);
        }
      }
    } else if (sscanf(rest, "%u %lf", &gi, &value) >= 1 && gi < (unsigned)ngpus) {
      struct fake_gpu* g = &gpus[gi];
      if (strcmp(line, "util") == 0) g->util = (unsigned)value;
      if (strcmp(line, "mem") == 0) g->mem_used_mb = (unsigned long long)value;
      if (strcmp(line, "power") == 0) g->power_w = value;
      if (strcmp(line, "temp") == 0) g->temp = (unsigned)value;
      if (strcmp(line, "energy") == 0) g->energy_j = (unsigned long long)value;
      if (strcmp(line, "ecc") == 0) g->ecc = (unsigned long long)value;
      if (strcmp(line, "remapfail") == 0) g->remap_fail = (unsigned)value;
      if (strcmp(line, "remappending") == 0) g->remap_pending = (unsigned)value;
      if (strcmp(line, "lost") == 0) g->lost = 1;
      if (strcmp(line, "smclock") == 0) g->sm_clock = (unsigned)value;
      if (strcmp(line, "memclock") == 0) g->mem_clock = (unsigned)value;
      if (strcmp(line, "memtemp") == 0) g->mem_temp = (unsigned)value;
      if (strcmp(line, "replays") == 0) {
        g->has_replays = 1;
        g->replays = (unsigned)value;
      }
    }
  }
  fclose(f);
  return fail;
}

// The GPU of a handle, with its readings refreshed; NULL for a bad handle. Requires mu.
static struct fake_gpu* Gpu(nvmlDevice_t d) {
  if (d == NULL || d->index < 0 || d->index >= ngpus) return NULL;
  Load(0);
  return &gpus[d->index];
}

#define LOCKED(body)           \
  do {                         \
    pthread_mutex_lock(&mu);   \
    nvmlReturn_t r_ = (body);  \
    pthread_mutex_unlock(&mu); \
    return r_;                 \
  } while (0)

#define GPU_OR_FAIL(d, g)                            \
  if (!initialised) return NVML_ERROR_UNINITIALIZED; \
  struct fake_gpu* g = Gpu(d);                       \
  if (g == NULL) return NVML_ERROR_INVALID_ARGUMENT; \
  if (g->lost) return NVML_ERROR_GPU_IS_LOST

static nvmlReturn_t Init(void) {
  int fail = Load(1);
  if (fail != 0) return fail;
  initialised = 1;
  xids_delivered = 0;
  xids_handled = 0;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlInit_v2(void) { LOCKED(Init()); }

nvmlReturn_t nvmlShutdown(void) {
  pthread_mutex_lock(&mu);
  initialised = 0;
  pthread_mutex_unlock(&mu);
  return NVML_SUCCESS;
}

const char* nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT:
      return "Timeout";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

static nvmlReturn_t Copy(char* out, unsigned length, const char* s) {
  if (strlen(s) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  memcpy(out, s, strlen(s) + 1);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  LOCKED(initialised ? Copy(version, length, driver) : NVML_ERROR_UNINITIALIZED);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* version) {
  pthread_mutex_lock(&mu);
  *version = cuda;
  pthread_mutex_unlock(&mu);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  pthread_mutex_lock(&mu);
  *count = (unsigned)ngpus;
  nvmlReturn_t r = initialised ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
  pthread_mutex_unlock(&mu);
  return r;
}

static nvmlReturn_t HandleByIndex(unsigned index, nvmlDevice_t* device) {
  if (!initialised) return NVML_ERROR_UNINITIALIZED;
  if (index >= (unsigned)ngpus) return NVML_ERROR_INVALID_ARGUMENT;
  *device = &gpus[index].handle;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  LOCKED(HandleByIndex(index, device));
}

static nvmlReturn_t Uuid(nvmlDevice_t d, char* out, unsigned length, int name) {
  GPU_OR_FAIL(d, g);
  if (d->mig >= 0) return Copy(out, length, name ? g->migs[d->mig].name : g->migs[d->mig].uuid);
  return Copy(out, length, name ? g->name : g->uuid);
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* uuid, unsigned int length) {
  LOCKED(Uuid(d, uuid, length, 0));
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* name, unsigned int length) {
  LOCKED(Uuid(d, name, length, 1));
}

static nvmlReturn_t Minor(nvmlDevice_t d, unsigned* minor) {
  GPU_OR_FAIL(d, g);
  if (d->mig >= 0) return NVML_ERROR_NOT_SUPPORTED;
  *minor = g->minor;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned int* minor) {
  LOCKED(Minor(d, minor));
}

static nvmlReturn_t Memory(nvmlDevice_t d, nvmlMemory_t* m) {
  GPU_OR_FAIL(d, g);
  unsigned long long total = d->mig >= 0 ? g->migs[d->mig].memory_mb : g->memory_mb;
  unsigned long long used = d->mig >= 0 ? 0 : g->mem_used_mb;
  m->total = total << 20;
  m->used = used << 20;
  m->free = m->total - m->used;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* memory) {
  LOCKED(Memory(d, memory));
}

static void FillPci(nvmlPciInfo_t* pci, const char* bus) {
  memset(pci, 0, sizeof *pci);
  snprintf(pci->busId, sizeof pci->busId, "%s", bus);
  unsigned domain = 0, b = 0, dev = 0;
  sscanf(bus, "%x:%x:%x", &domain, &b, &dev);
  pci->domain = domain;
  pci->bus = b;
  pci->device = dev;
  snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04x:%02x:%02x.0", domain & 0xffff, b, dev);
}

static nvmlReturn_t Pci(nvmlDevice_t d, nvmlPciInfo_t* pci) {
  GPU_OR_FAIL(d, g);
  FillPci(pci, g->bus);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* pci) { LOCKED(Pci(d, pci)); }

// Link `link` of GPU `g`: its remote bus id, or NULL when the link is not there.
static const char* Remote(struct fake_gpu* g, unsigned link) {
  static const char* kSwitch = "00000000:C1:00.0";  // an NVSwitch's bus id
  if (strcmp(g->nvlink, "switch") == 0) return link < 4 ? kSwitch : NULL;
  if (strcmp(g->nvlink, "-") == 0) return NULL;
  // Peers "1,3": link k goes to the k-th peer.
  char copy[64];
  snprintf(copy, sizeof copy, "%s", g->nvlink);
  unsigned k = 0;
  for (char* tok = strtok(copy, ","); tok != NULL; tok = strtok(NULL, ","), ++k) {
    int peer = atoi(tok);
    if (k == link && peer >= 0 && peer < ngpus) return gpus[peer].bus;
  }
  return NULL;
}

static nvmlReturn_t LinkState(nvmlDevice_t d, unsigned link, int* active) {
  GPU_OR_FAIL(d, g);
  if (link >= NVML_NVLINK_MAX_LINKS) return NVML_ERROR_INVALID_ARGUMENT;
  if (strcmp(g->nvlink, "-") == 0) return NVML_ERROR_NOT_SUPPORTED;
  *active = Remote(g, link) != NULL ? NVML_FEATURE_ENABLED : 0;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, int* is_active) {
  LOCKED(LinkState(d, link, is_active));
}

static nvmlReturn_t LinkRemote(nvmlDevice_t d, unsigned link, nvmlPciInfo_t* pci) {
  GPU_OR_FAIL(d, g);
  const char* bus = Remote(g, link);
  if (bus == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  FillPci(pci, bus);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned int link,
                                                 nvmlPciInfo_t* pci) {
  LOCKED(LinkRemote(d, link, pci));
}

static nvmlReturn_t MigMode(nvmlDevice_t d, unsigned* current, unsigned* pending) {
  GPU_OR_FAIL(d, g);
  *current = *pending = g->nmig > 0 ? NVML_DEVICE_MIG_ENABLE : 0;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int* current, unsigned int* pending) {
  LOCKED(MigMode(d, current, pending));
}

static nvmlReturn_t MaxMig(nvmlDevice_t d, unsigned* count) {
  GPU_OR_FAIL(d, g);
  (void)g;
  *count = MAX_MIGS;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int* count) {
  LOCKED(MaxMig(d, count));
}

static nvmlReturn_t MigHandle(nvmlDevice_t d, unsigned index, nvmlDevice_t* mig) {
  GPU_OR_FAIL(d, g);
  if (index >= (unsigned)g->nmig) return NVML_ERROR_NOT_FOUND;
  *mig = &g->mig_handles[index];
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned int index,
                                                 nvmlDevice_t* mig) {
  LOCKED(MigHandle(d, index, mig));
}

static nvmlReturn_t InstanceId(nvmlDevice_t d, unsigned* id, int compute) {
  GPU_OR_FAIL(d, g);
  if (d->mig < 0) return NVML_ERROR_NOT_SUPPORTED;
  *id = compute ? g->migs[d->mig].ci : g->migs[d->mig].gi;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t d, unsigned int* id) {
  LOCKED(InstanceId(d, id, 0));
}
nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t d, unsigned int* id) {
  LOCKED(InstanceId(d, id, 1));
}

// Readings of whole GPUs only, as NVML (MIG devices answer NOT_SUPPORTED).
#define READING(fn, params, body)                     \
  static nvmlReturn_t fn##Locked params {             \
    GPU_OR_FAIL(d, g);                                \
    if (d->mig >= 0) return NVML_ERROR_NOT_SUPPORTED; \
    body;                                             \
    return NVML_SUCCESS;                              \
  }

READING(Util, (nvmlDevice_t d, nvmlUtilization_t* u), u->gpu = g->util; u->memory = 0)
READING(Power, (nvmlDevice_t d, unsigned* mw), *mw = (unsigned)(g->power_w * 1000))
READING(Temp, (nvmlDevice_t d, unsigned* c), *c = g->temp)
READING(Energy, (nvmlDevice_t d, unsigned long long* mj), *mj = g->energy_j * 1000)
READING(Ecc, (nvmlDevice_t d, unsigned long long* n), *n = g->ecc)
READING(Remap, (nvmlDevice_t d, unsigned* corr, unsigned* unc, unsigned* pending, unsigned* failed),
        *corr = 0;
        *unc = g->remap_pending; *pending = g->remap_pending; *failed = g->remap_fail)

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) {
  LOCKED(UtilLocked(d, u));
}
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int* mw) {
  LOCKED(PowerLocked(d, mw));
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int* c) {
  if (sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  LOCKED(TempLocked(d, c));
}
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long* mj) {
  LOCKED(EnergyLocked(d, mj));
}
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter,
                                         unsigned long long* n) {
  if (type != NVML_MEMORY_ERROR_TYPE_UNCORRECTED || counter != NVML_VOLATILE_ECC) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  LOCKED(EccLocked(d, n));
}
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int* corr, unsigned int* unc,
                                       unsigned int* pending, unsigned int* failed) {
  LOCKED(RemapLocked(d, corr, unc, pending, failed));
}

static nvmlReturn_t ClockLocked(nvmlDevice_t d, int type, unsigned* mhz) {
  GPU_OR_FAIL(d, g);
  unsigned v = type == NVML_CLOCK_SM ? g->sm_clock : type == NVML_CLOCK_MEM ? g->mem_clock : 0;
  if (v == 0) return NVML_ERROR_NOT_SUPPORTED;
  *mhz = v;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int* mhz) {
  LOCKED(ClockLocked(d, type, mhz));
}

static nvmlReturn_t ReplaysLocked(nvmlDevice_t d, unsigned* n) {
  GPU_OR_FAIL(d, g);
  if (!g->has_replays) return NVML_ERROR_NOT_SUPPORTED;
  *n = g->replays;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t d, unsigned int* value) {
  LOCKED(ReplaysLocked(d, value));
}

// Memory temperature only (the one field the backend asks for), as an unsigned int.
static nvmlReturn_t FieldsLocked(nvmlDevice_t d, int count, nvmlFieldValue_t* values) {
  GPU_OR_FAIL(d, g);
  for (int i = 0; i < count; ++i) {
    nvmlFieldValue_t* f = &values[i];
    if (f->fieldId == NVML_FI_DEV_MEMORY_TEMP && g->mem_temp != 0) {
      f->nvmlReturn = NVML_SUCCESS;
      f->valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
      f->value.uiVal = g->mem_temp;
    } else {
      f->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
  }
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count, nvmlFieldValue_t* values) {
  LOCKED(FieldsLocked(d, count, values));
}

// GPM. A sample holds the GPU's percentages when it was taken.
struct nvmlGpmSample_st {
  int taken;
  double pct[5];
};

static nvmlReturn_t GpmSupportLocked(nvmlDevice_t d, nvmlGpmSupport_t* support) {
  GPU_OR_FAIL(d, g);
  if (support->version != NVML_GPM_SUPPORT_VERSION) return NVML_ERROR_INVALID_ARGUMENT;
  support->isSupportedDevice = d->mig < 0 && g->gpm ? 1 : 0;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t d, nvmlGpmSupport_t* support) {
  LOCKED(GpmSupportLocked(d, support));
}

nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* sample) {
  *sample = calloc(1, sizeof(struct nvmlGpmSample_st));
  return *sample == NULL ? NVML_ERROR_UNKNOWN : NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t sample) {
  free(sample);
  return NVML_SUCCESS;
}

static nvmlReturn_t GpmSampleLocked(nvmlDevice_t d, nvmlGpmSample_t sample) {
  GPU_OR_FAIL(d, g);
  if (!g->gpm || d->mig >= 0) return NVML_ERROR_NOT_SUPPORTED;
  sample->taken = 1;
  memcpy(sample->pct, g->gpm_pct, sizeof sample->pct);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t d, nvmlGpmSample_t sample) {
  LOCKED(GpmSampleLocked(d, sample));
}

// A MIG GPU instance's sample, asked of its parent GPU, as NVML: the parent must have GPM (and
// be asked as itself, not through a MIG handle), the instance must exist.
static nvmlReturn_t GpmMigSampleLocked(nvmlDevice_t d, unsigned instance,
                                       nvmlGpmSample_t sample) {
  GPU_OR_FAIL(d, g);
  if (!g->gpm || d->mig >= 0) return NVML_ERROR_NOT_SUPPORTED;
  for (int k = 0; k < g->nmig; ++k) {
    if (g->migs[k].gi != instance) continue;
    if (!g->migs[k].gpm) return NVML_ERROR_NOT_SUPPORTED;
    sample->taken = 1;
    memcpy(sample->pct, g->migs[k].gpm_pct, sizeof sample->pct);
    return NVML_SUCCESS;
  }
  return NVML_ERROR_NOT_FOUND;
}
nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t d, unsigned int instance, nvmlGpmSample_t sample) {
  LOCKED(GpmMigSampleLocked(d, instance, sample));
}

nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* get) {
  if (get->version != NVML_GPM_METRICS_GET_VERSION || get->sample1 == NULL ||
      get->sample2 == NULL || !get->sample1->taken || !get->sample2->taken ||
      get->numMetrics > CORRAL_NVML_GPM_METRICS) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  for (unsigned i = 0; i < get->numMetrics; ++i) {
    nvmlGpmMetric_t* m = &get->metrics[i];
    int k = -1;
    switch (m->metricId) {
      case NVML_GPM_METRIC_GRAPHICS_UTIL: k = 0; break;
      case NVML_GPM_METRIC_SM_UTIL: k = 1; break;
      case NVML_GPM_METRIC_SM_OCCUPANCY: k = 2; break;
      case NVML_GPM_METRIC_ANY_TENSOR_UTIL: k = 3; break;
      case NVML_GPM_METRIC_DRAM_BW_UTIL: k = 4; break;
    }
    m->nvmlReturn = k < 0 ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS;
    m->value = k < 0 ? 0 : get->sample2->pct[k];
  }
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  *set = calloc(1, sizeof(struct nvmlEventSet_st));
  return *set == NULL ? NVML_ERROR_UNKNOWN : NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types,
                                      nvmlEventSet_t set) {
  pthread_mutex_lock(&mu);
  nvmlReturn_t r = NVML_SUCCESS;
  if (d == NULL || d->index < 0 || d->index >= ngpus || set == NULL) {
    r = NVML_ERROR_INVALID_ARGUMENT;
  } else if (types != nvmlEventTypeXidCriticalError) {
    r = NVML_ERROR_NOT_SUPPORTED;
  } else {
    set->registered[d->index] = 1;
  }
  pthread_mutex_unlock(&mu);
  return r;
}

// The next undelivered `xid` line for a registered GPU. Requires mu.
static int NextXid(nvmlEventSet_t set, nvmlEventData_t* data) {
  const char* path = Path();
  FILE* f = path != NULL ? fopen(path, "r") : NULL;
  if (f == NULL) return 0;
  char line[MAX_LINE];
  int seen = 0, found = 0;
  unsigned g = 0, xid = 0;
  while (!found && fgets(line, sizeof line, f) != NULL) {
    if (sscanf(line, "xid %u %u", &g, &xid) != 2) continue;
    if (seen++ < xids_delivered) continue;
    xids_delivered++;
    if (g < (unsigned)ngpus && set->registered[g]) {
      memset(data, 0, sizeof *data);
      data->device = &gpus[g].handle;
      data->eventType = nvmlEventTypeXidCriticalError;
      data->eventData = xid;
      data->gpuInstanceId = 0xFFFFFFFFu;
      data->computeInstanceId = 0xFFFFFFFFu;
      found = 1;
    }
  }
  fclose(f);
  return found;
}

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data,
                                 unsigned int timeout_ms) {
  // Waits for an `xid` line until the timeout, looking at the file again when a test says it
  // changed (corral_fake_nvml_notify). Coming back here means the caller has handled what it
  // was given before.
  pthread_once(&events_once, InitEventsCond);
  struct timespec deadline = Deadline(timeout_ms);
  pthread_mutex_lock(&mu);
  xids_handled = xids_delivered;
  pthread_cond_broadcast(&events_cond);
  nvmlReturn_t r = NVML_ERROR_TIMEOUT;
  while (1) {
    if (initialised && NextXid(set, data)) {
      r = NVML_SUCCESS;
      break;
    }
    if (pthread_cond_timedwait(&events_cond, &mu, &deadline) == ETIMEDOUT) break;
  }
  pthread_mutex_unlock(&mu);
  return r;
}

// Test hooks (dlsym'd by agent/gpu/testing/fake_nvml.h).

// The description file changed: waiting event calls look at it again.
void corral_fake_nvml_notify(void) {
  pthread_once(&events_once, InitEventsCond);
  pthread_mutex_lock(&mu);
  pthread_cond_broadcast(&events_cond);
  pthread_mutex_unlock(&mu);
}

// Waits until the caller has handled `n` `xid` events (delivered them and come back for
// more) or `timeout_ms` passes; returns whether it has.
int corral_fake_nvml_wait_xids_handled(int n, unsigned timeout_ms) {
  pthread_once(&events_once, InitEventsCond);
  struct timespec deadline = Deadline(timeout_ms);
  pthread_mutex_lock(&mu);
  int ok = 1;
  while (xids_handled < n) {
    if (pthread_cond_timedwait(&events_cond, &mu, &deadline) == ETIMEDOUT) {
      ok = xids_handled >= n;
      break;
    }
  }
  pthread_mutex_unlock(&mu);
  return ok;
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  free(set);
  return NVML_SUCCESS;
}
