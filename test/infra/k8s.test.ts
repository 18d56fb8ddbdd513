import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse, parseAllDocuments } from 'yaml'
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject'
import { TriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication'
import { Deployment } from 'kubernetes-models/apps/v1/Deployment'
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler'
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget'
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap'
import { Namespace } from 'kubernetes-models/v1/Namespace'
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim'
import { Secret } from 'kubernetes-models/v1/Secret'
import { Service } from 'kubernetes-models/v1/Service'
import { drainTimeMs, loadConfig, processNames, type ProcessName } from '@letters/config'
import { queueNames, queueOfJob, type JobName, type QueueName } from '@letters/contracts'
import { closeQueues, openQueues, producerConnection } from '@letters/pipeline'
import { testConfig } from '../support/context.js'
import { silentLog } from '../support/pipeline.js'
import { repositoryRoot } from '../support/processes.js'
import { MIGRATE_COMMAND, productionCommands, type ProductionCommand } from '../support/production-build.js'
import { deleteKeys } from '../support/redis-keys.js'

const k8sDir = join(repositoryRoot, 'infra/k8s')

/** A Kubernetes object as read from YAML; each kind's model checks it against its schema. */
type Manifest = {
  apiVersion: string
  kind: string
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> }
  [field: string]: unknown
}

/** The schema (model) of every kind the manifests use: Kubernetes' own, and KEDA's CRDs. */
const models: Record<string, new (data: never) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
  'keda.sh/v1alpha1/TriggerAuthentication': TriggerAuthentication,
}

/** Throws with the schema's complaints when `manifest` is not a valid object of its kind. */
function validate(manifest: Manifest): void {
  const Model = models[`${manifest.apiVersion}/${manifest.kind}`]
  if (!Model) throw new Error(`${manifest.kind} ${manifest.metadata?.name}: no schema for ${manifest.apiVersion} ${manifest.kind}`)
  new Model(manifest as never).validate()
}

/** Which worker consumes each queue: a new queue does not compile here until it has one. */
const consumerOf: Record<QueueName, ProcessName> = { address: 'address-worker', production: 'production-worker', webhooks: 'webhook-worker' }

const parseManifests = (text: string) =>
  parseAllDocuments(text)
    .map((document) => document.toJS() as Manifest)
    .filter(Boolean)

/** kubectl's kustomize, where kubectl is installed with kustomize 5 or later (CI machines may have none). */
async function kustomizeVersion(): Promise<number | undefined> {
  const version = await promisify(execFile)('kubectl', ['version', '--client', '-o', 'json']).then(
    ({ stdout }) => (JSON.parse(stdout) as { kustomizeVersion?: string }).kustomizeVersion,
    () => undefined,
  )
  const major = Number(/^v(\d+)\./.exec(version ?? '')?.[1])
  return Number.isFinite(major) ? major : undefined
}
const kustomize = await kustomizeVersion()
const hasKustomize = kustomize !== undefined && kustomize >= 5

let kustomization: {
  namespace: string
  resources: string[]
  labels: Array<{ pairs: Record<string, string> }>
  images: Array<{ name: string; newName: string; newTag: string }>
}
/** Every object kustomization.yaml applies, with the file it comes from. */
let manifests: Array<Manifest & { file: string }>
let secretTemplate: Manifest & { stringData: Record<string, string> }
let commands: Record<ProcessName, ProductionCommand>

/** A model class of kubernetes-models: its kind, and a constructor that types the object's fields. */
type ModelClass<M> = { kind: string; new (data: never): M }
/** `manifest` as an object of `Model`, its fields typed. */
const asModel = <M>(Model: ModelClass<M>, manifest: Manifest) => new (Model as unknown as new (data: Manifest) => M)(manifest)

const all = (kind: string) => manifests.filter((manifest) => manifest.kind === kind)
/** The one object of `kind` named `name`, as read. */
const rawOne = (kind: string, name: string) => {
  const found = all(kind).filter((manifest) => manifest.metadata.name === name)
  expect(found, `one ${kind} ${name}`).toHaveLength(1)
  return found[0]!
}
const one = <M>(Model: ModelClass<M>, name: string) => asModel(Model, rawOne(Model.kind, name))
const deploymentOf = (name: ProcessName) => one(Deployment, name)
const containerOf = (name: ProcessName) => {
  const containers = deploymentOf(name).spec!.template.spec!.containers
  expect(containers, `${name}: one container`).toHaveLength(1)
  return containers[0]!
}
const configMapData = () => one(ConfigMap, 'letters-config').data ?? {}
/** The configuration a process starts with: the ConfigMap, then its Deployment's literal env (secrets left to their defaults). */
const configOf = (name: ProcessName) => {
  const literal = Object.fromEntries(
    (containerOf(name).env ?? []).filter((variable) => variable.value !== undefined).map((variable) => [variable.name, variable.value!]),
  )
  return loadConfig({ ...configMapData(), ...literal })
}

beforeAll(async () => {
  kustomization = parse(await readFile(join(k8sDir, 'kustomization.yaml'), 'utf8')) as typeof kustomization
  manifests = (
    await Promise.all(
      kustomization.resources.map(async (file) => parseManifests(await readFile(join(k8sDir, file), 'utf8')).map((manifest) => ({ ...manifest, file }))),
    )
  ).flat()
  secretTemplate = parseManifests(await readFile(join(k8sDir, 'secret.example.yaml'), 'utf8'))[0] as typeof secretTemplate
  commands = await productionCommands()
})

describe('infra/k8s', () => {
  it('applies every manifest of the folder through kustomization.yaml, all but the Secret template', async () => {
    const files = (await readdir(k8sDir)).filter((file) => file.endsWith('.yaml')).sort()
    expect([...kustomization.resources, 'kustomization.yaml', 'secret.example.yaml'].sort()).toEqual(files)
    expect(kustomization.namespace).toBe('letters')
    expect(one(Namespace, 'letters').metadata?.labels).toMatchObject({ 'pod-security.kubernetes.io/enforce': 'restricted' })
    expect(kustomization.images.map((image) => image.name)).toEqual(['letters'])
  })

  it('holds only objects valid against the Kubernetes and KEDA schemas (kubernetes-models), the Secret template too', () => {
    for (const manifest of [...manifests, secretTemplate]) expect(() => validate(manifest), `${manifest.kind} ${manifest.metadata.name}`).not.toThrow()
    // The check has teeth: a port given by name where a number must be, and a scaler's replica count as text.
    const deployment = asModel(Deployment, structuredClone(rawOne('Deployment', 'gateway')))
    deployment.spec!.template.spec!.containers[0]!.ports![0]!.containerPort = 'http' as unknown as number
    expect(() => deployment.validate()).toThrow(/containerPort must be integer/)
    const scaledObject = asModel(ScaledObject, structuredClone(rawOne('ScaledObject', 'production-worker')))
    scaledObject.spec.minReplicaCount = 'one' as unknown as number
    expect(() => scaledObject.validate()).toThrow(/minReplicaCount must be integer/)
  })

  it('configures every process from the ConfigMap (values the configuration accepts) and its secrets from the Secret the template describes', () => {
    expect(() => loadConfig(configMapData())).not.toThrow()
    expect(loadConfig(configMapData()).nodeEnv).toBe('production')
    for (const name of processNames) {
      const container = containerOf(name)
      expect(container.envFrom, name).toEqual([{ configMapRef: { name: 'letters-config' } }])
      const secretRefs = (container.env ?? []).flatMap((variable) =>
        variable.valueFrom?.secretKeyRef ? [{ variable: variable.name, ...variable.valueFrom.secretKeyRef }] : [],
      )
      expect(secretRefs.map((ref) => ref.variable).sort(), name).toEqual(
        name === 'gateway' ? ['ADMIN_TOKEN', 'DATABASE_URL', 'FLOOR_TOKEN', 'REDIS_URL'] : ['DATABASE_URL', 'REDIS_URL'],
      )
      for (const ref of secretRefs) {
        expect(ref.name, `${name} ${ref.variable}`).toBe(secretTemplate.metadata.name)
        expect(Object.keys(secretTemplate.stringData), `${name} ${ref.variable}`).toContain(ref.key)
      }
    }
    // Nothing secret in the ConfigMap.
    for (const variable of Object.keys(secretTemplate.stringData)) expect(configMapData()[variable], variable).toBeUndefined()
  })

  it('believes X-Forwarded-For from the Ingress controller only: TRUST_PROXY names a private pod range', () => {
    const { trustProxy } = loadConfig(configMapData())
    expect(trustProxy.length).toBeGreaterThan(0)
    // The pod network, never a public range a client could send from.
    for (const range of trustProxy) expect(range).toMatch(/^(10\.|172\.(1[6-9]|2[0-9]|3[01])\.|192\.168\.|f[cd][0-9a-f]{2}:)/)
  })

  it('lets no pod but the Ingress controller’s reach the gateway’s port, so no other pod can forge X-Forwarded-For (NetworkPolicy)', () => {
    const gatewayLabels = deploymentOf('gateway').spec!.template.metadata!.labels
    const policies = all('NetworkPolicy').map((manifest) => asModel(NetworkPolicy, manifest))
    const guarding = policies.filter((policy) => {
      const selected = policy.spec?.podSelector?.matchLabels ?? {}
      return Object.entries(selected).every(([label, value]) => gatewayLabels?.[label] === value)
    })
    expect(guarding, 'one NetworkPolicy selects the gateway pods').toHaveLength(1)
    const [policy] = guarding
    expect(policy!.spec?.podSelector).toEqual({ matchLabels: gatewayLabels })
    expect(policy!.spec?.policyTypes).toEqual(['Ingress'])
    // One rule: from the controller's namespace (no pod selector, no address block, no other
    // namespace), to the gateway's HTTP port alone.
    expect(policy!.spec?.ingress).toEqual([
      {
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } }],
        ports: [{ port: containerOf('gateway').ports![0]!.name, protocol: 'TCP' }],
      },
    ])
  })

  it('keeps Postgres and Redis outside: no workload of ours runs them, and the Secret template holds placeholders only', () => {
    expect(
      all('Deployment')
        .map((deployment) => deployment.metadata.name)
        .sort(),
    ).toEqual([...processNames].sort())
    expect(manifests.filter((manifest) => ['StatefulSet', 'DaemonSet', 'Pod', 'Secret'].includes(manifest.kind))).toEqual([])
    // Passwords and the token to replace, hosts from the reserved example domain.
    for (const [key, value] of Object.entries(secretTemplate.stringData)) expect(value, key).toMatch(/CHANGE-ME|^[a-z.]+\.example\.internal:\d+$/)
    // KEDA's address is the app's Redis, host:port apart.
    const redisUrl = new URL(secretTemplate.stringData.REDIS_URL!)
    expect(secretTemplate.stringData.REDIS_ADDRESS).toBe(redisUrl.host)
    // Applied unedited, the gateway refuses to start rather than run with a known admin token.
    expect(() => loadConfig({ ...configMapData(), ...secretTemplate.stringData })).toThrow(/^ADMIN_TOKEN=\(not shown\): must be at least 16 characters/)
    // And with only the admin token replaced, for the floor's token.
    expect(() => loadConfig({ ...configMapData(), ...secretTemplate.stringData, ADMIN_TOKEN: 'an-admin-token-of-32-characters!' })).toThrow(
      /^FLOOR_TOKEN=\(not shown\): must be at least 16 characters/,
    )
  })

  it.each(processNames)('runs %s as npm run start:prod does, as args under the image’s tini, its count left to an autoscaler', (name) => {
    const deployment = deploymentOf(name)
    const container = containerOf(name)
    expect(deployment.metadata?.name).toBe(name)
    expect(deployment.spec!.replicas, `${name}: an autoscaler owns the count`).toBeUndefined()
    expect(container.image).toBe('letters')
    expect(container.command, `${name}: command would replace the image's entry point (tini)`).toBeUndefined()
    expect(container.args).toEqual(commands[name].argv)
  })

  it('keeps the pods’ pools within the connections Postgres was sized for, at every autoscaler’s maximum and mid-rollout', () => {
    const annotations = rawOne('ConfigMap', 'letters-config').metadata.annotations ?? {}
    const maxConnections = Number(annotations['letters.example/postgres-max-connections'])
    const reserved = Number(annotations['letters.example/postgres-reserved-connections'])
    expect(reserved).toBeGreaterThan(0)
    const maxPods = (name: ProcessName) => {
      if (name === 'gateway') return Number((rawOne('HorizontalPodAutoscaler', 'gateway').spec as { maxReplicas: number }).maxReplicas)
      const scaled = all('ScaledObject').find((object) => (object.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name === name)
      return Number((scaled!.spec as { maxReplicaCount: number }).maxReplicaCount)
    }
    // A rolling update starts the new pods before the old ones go: maxSurge more (Kubernetes' default 25%, rounded up).
    const surge = (name: ProcessName, pods: number) => {
      const declared = deploymentOf(name).spec!.strategy?.rollingUpdate?.maxSurge ?? '25%'
      return typeof declared === 'number' ? declared : Math.ceil((pods * Number(String(declared).replace('%', ''))) / 100)
    }
    const held = processNames.reduce((sum, name) => {
      const pods = maxPods(name)
      return sum + (pods + surge(name, pods)) * configOf(name).databasePoolMax
    }, 0)
    expect(held).toBeGreaterThan(0)
    expect(held).toBeLessThanOrEqual(maxConnections - reserved)
  })

  it('migrates before the gateway starts, and in no other Deployment: an init container running the CLI’s migrate with the database’s secret', () => {
    for (const name of processNames) {
      const initContainers = deploymentOf(name).spec!.template.spec!.initContainers ?? []
      if (name !== 'gateway') expect(initContainers, name).toEqual([])
    }
    const [migrate, ...others] = deploymentOf('gateway').spec!.template.spec!.initContainers ?? []
    expect(others).toEqual([])
    expect(migrate!.image).toBe('letters')
    expect(migrate!.command, 'command would replace the image’s entry point (tini)').toBeUndefined()
    expect(migrate!.args).toEqual(MIGRATE_COMMAND)
    expect(migrate!.env).toEqual([{ name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'letters-secrets', key: 'DATABASE_URL' } } }])
    expect(migrate!.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } })
    expect(migrate!.resources?.limits?.memory).toEqual(expect.any(String))
  })

  it.each(processNames)('probes %s where it answers: the gateway’s /healthz and /readyz on PORT, a worker’s /healthz on METRICS_PORT', (name) => {
    const container = containerOf(name)
    const config = configOf(name)
    const [port] = container.ports ?? []
    expect(container.ports, name).toHaveLength(1)
    expect(port!.containerPort).toBe(name === 'gateway' ? config.port : config.metricsPort)
    const probe = (kind: 'startupProbe' | 'livenessProbe' | 'readinessProbe') => container[kind]?.httpGet
    expect(probe('startupProbe'), name).toEqual({ path: '/healthz', port: port!.name })
    expect(probe('livenessProbe'), name).toEqual({ path: '/healthz', port: port!.name })
    expect(probe('readinessProbe'), name).toEqual({ path: name === 'gateway' ? '/readyz' : '/healthz', port: port!.name })
    if (name !== 'gateway') expect(container.env?.find((variable) => variable.name === 'METRICS_PORT')?.value).toBe(String(port!.containerPort))
  })

  it.each(processNames)('gives %s resources, a non-root user and a read-only root, with a volume for every directory it writes', (name) => {
    const pod = deploymentOf(name).spec!.template.spec!
    const container = containerOf(name)
    expect(container.resources?.requests, name).toEqual({ cpu: expect.any(String), memory: expect.any(String) })
    expect(container.resources?.limits?.memory, name).toEqual(expect.any(String))
    expect(pod.securityContext, name).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } })
    expect(container.securityContext, name).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } })
    expect(pod.automountServiceAccountToken, name).toBe(false)
    const mounts = Object.fromEntries((container.volumeMounts ?? []).map((mount) => [mount.mountPath, mount.name]))
    const volumes = Object.fromEntries((pod.volumes ?? []).map((volume) => [volume.name, volume]))
    expect(volumes[mounts['/tmp']!]?.emptyDir, `${name} /tmp`).toEqual({})
    const config = configOf(name)
    const writes: Record<ProcessName, Record<string, string>> = {
      gateway: { [config.artifactsDir]: 'letters-artifacts' },
      'address-worker': {},
      'production-worker': { [config.artifactsDir]: 'letters-artifacts', [config.spoolDir]: 'letters-spool' },
      'webhook-worker': {},
    }
    for (const [path, claim] of Object.entries(writes[name])) expect(volumes[mounts[path]!]?.persistentVolumeClaim?.claimName, `${name} ${path}`).toBe(claim)
  })

  it('shares one ReadWriteMany artifact store between the gateway pods and the floor, and the spool with the print server', () => {
    for (const claim of ['letters-artifacts', 'letters-spool']) {
      expect(one(PersistentVolumeClaim, claim).spec?.accessModes, claim).toEqual(['ReadWriteMany'])
    }
  })

  it.each(processNames)('gives %s a grace period beyond its drain time (and its preStop pause)', (name) => {
    const pod = deploymentOf(name).spec!.template.spec!
    const preStop = containerOf(name).lifecycle?.preStop?.exec?.command
    const pauseMs = preStop ? Number(/^sleep$/.test(preStop[0]!) ? preStop[1] : Number.NaN) * 1000 : 0
    expect(pauseMs, `${name}: preStop is a sleep`).not.toBeNaN()
    expect(pod.terminationGracePeriodSeconds! * 1000, name).toBeGreaterThan(drainTimeMs(name, configOf(name)) + pauseMs)
  })

  it.each(processNames)('lets a node drain take one %s pod at a time (PodDisruptionBudget)', (name) => {
    const budget = one(PodDisruptionBudget, name)
    expect(budget.spec?.selector?.matchLabels).toEqual(deploymentOf(name).spec!.template.metadata!.labels)
    expect(budget.spec?.maxUnavailable).toBe(1)
  })

  it('serves the gateway behind a Service and scales it on CPU from two replicas', () => {
    const service = one(Service, 'gateway')
    expect(service.spec?.selector).toEqual(deploymentOf('gateway').spec!.template.metadata!.labels)
    expect(service.spec?.ports?.map((port) => port.targetPort)).toEqual([containerOf('gateway').ports![0]!.name])
    const autoscaler = one(HorizontalPodAutoscaler, 'gateway')
    expect(autoscaler.spec?.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'gateway' })
    expect(autoscaler.spec?.minReplicas).toBeGreaterThanOrEqual(2)
    expect(autoscaler.spec?.metrics).toEqual([
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: expect.any(Number) } } },
    ])
    // Utilization is a share of the request.
    expect(containerOf('gateway').resources?.requests?.cpu).toEqual(expect.any(String))
    expect(all('HorizontalPodAutoscaler')).toHaveLength(1)
  })

  describe('KEDA', () => {
    const prefix = () => configMapData().QUEUE_PREFIX!
    const scalerOf = (queue: QueueName) => one(ScaledObject, consumerOf[queue])

    it('scales every worker on its queue, and nothing else', () => {
      expect(
        all('ScaledObject')
          .map((scaler) => scaler.metadata.name)
          .sort(),
      ).toEqual(queueNames.map((queue) => consumerOf[queue]).sort())
      // The prefix is a Redis Cluster hash tag: the lists below live in one slot with the rest.
      expect(prefix()).toMatch(/^\{[^}]+\}/)
    })

    it.each(queueNames)('queue %s: a Redis list scaler on BullMQ’s wait list under the ConfigMap’s QUEUE_PREFIX, never down to zero', async (queue) => {
      const scaler = scalerOf(queue)
      expect(scaler.spec.scaleTargetRef).toEqual({ name: consumerOf[queue] })
      expect(scaler.spec.minReplicaCount).toBeGreaterThanOrEqual(1)
      expect(scaler.spec.maxReplicaCount).toBeGreaterThan(scaler.spec.minReplicaCount!)
      expect(scaler.spec.triggers).toHaveLength(1)
      const [trigger] = scaler.spec.triggers
      expect(trigger!.type).toBe('redis')
      expect(Number(trigger!.metadata.listLength)).toBeGreaterThan(0)
      // The key BullMQ itself names (Queue#keys), not one written by hand.
      const queues = openQueues(producerConnection(testConfig().redisUrl, 'k8s-test', silentLog), prefix(), silentLog)
      try {
        expect(trigger!.metadata.listName).toBe(queues[queue].keys.wait)
        expect(trigger!.metadata.listName).toBe(`${prefix()}:${queue}:wait`)
      } finally {
        await closeQueues(queues)
      }
      const auth = one(TriggerAuthentication, trigger!.authenticationRef!.name)
      const refs = Object.fromEntries((auth.spec?.secretTargetRef ?? []).map((ref) => [ref.parameter, ref]))
      expect(Object.keys(refs).sort()).toEqual(['address', 'password'])
      for (const ref of Object.values(refs)) {
        expect(ref.name).toBe(secretTemplate.metadata.name)
        expect(Object.keys(secretTemplate.stringData)).toContain(ref.key)
      }
    })

    describe('against Redis', () => {
      const tagged = `{${testConfig().queuePrefix}-keda}`
      afterAll(() => deleteKeys(testConfig().redisUrl, `${tagged}*`))

      it('counts every job waiting in a queue: a job the service adds (its job options) is in the list KEDA reads', async () => {
        const connection = producerConnection(testConfig().redisUrl, 'k8s-test', silentLog)
        const queues = openQueues(connection, tagged, silentLog)
        try {
          for (const queue of queueNames) {
            const jobName = (Object.keys(queueOfJob) as JobName[]).find((name) => queueOfJob[name] === queue)!
            await queues[queue].add(jobName, { letterId: randomUUID(), eventId: randomUUID() }, { jobId: randomUUID() })
            const listName = String(scalerOf(queue).spec.triggers[0]!.metadata.listName).replace(prefix(), tagged)
            expect(await connection.type(listName), listName).toBe('list')
            expect(await connection.llen(listName), listName).toBe(1)
          }
        } finally {
          await closeQueues(queues)
          connection.disconnect()
        }
      })
    })
  })

  // kubectl is not one of the project's dependencies: where it is missing this one check says so and is skipped.
  it.skipIf(!hasKustomize)(
    `builds with kubectl kustomize: every object valid, in the letters namespace, labelled, on the pushed image${hasKustomize ? '' : ' (skipped: no kubectl with kustomize 5 or later on this machine)'}`,
    async () => {
      const { stdout } = await promisify(execFile)('kubectl', ['kustomize', k8sDir], { maxBuffer: 16 * 1024 * 1024 })
      const built = parseManifests(stdout)
      expect(built.map((manifest) => `${manifest.kind}/${manifest.metadata.name}`).sort()).toEqual(
        manifests.map((manifest) => `${manifest.kind}/${manifest.metadata.name}`).sort(),
      )
      const [image] = kustomization.images
      for (const manifest of built) {
        expect(() => validate(manifest), `${manifest.kind} ${manifest.metadata.name}`).not.toThrow()
        if (manifest.kind !== 'Namespace') expect(manifest.metadata.namespace, `${manifest.kind} ${manifest.metadata.name}`).toBe('letters')
        expect(manifest.metadata.labels, `${manifest.kind} ${manifest.metadata.name}`).toMatchObject(kustomization.labels[0]!.pairs)
        if (manifest.kind === 'Deployment') {
          const deployment = asModel(Deployment, manifest)
          expect(deployment.spec!.template.spec!.containers[0]!.image).toBe(`${image!.newName}:${image!.newTag}`)
        }
      }
    },
  )
})
