/**
 * OpenTelemetry's SDK for traces, started when OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is
 * set. app.ts imports this module dynamically, so that with tracing off no OpenTelemetry package is loaded at all.
 * Spans go out in batches over OTLP/HTTP (protobuf, or JSON with OTEL_EXPORTER_OTLP_PROTOCOL=http/json); the
 * operations' spans are the GraphQL plugin's (gateway/plugins/tracing.ts), the Redis commands' the ioredis
 * instrumentation's (redis/clients.ts traceRedisCommands).
 *
 * An incoming trace context is read with W3C Trace Context's propagator (`traceparent`, `tracestate`), registered here.
 *
 * A process that set OpenTelemetry up before the gateway started (a preloaded SDK, or a test with an in-memory
 * exporter) keeps its tracer provider, context manager and propagator: the gateway's spans then go wherever that one
 * sends them.
 */
import { context, propagation, trace, type TracerProvider as TracerProviderApi } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { Config } from './config.js';
import type { Logger } from './logger.js';
import { traceRedisCommands } from './redis/clients.js';

export interface Tracing {
  /** Where the gateway's spans go: its own provider, or the one the process registered before. */
  provider: TracerProviderApi;
  /** Sends the spans not yet sent, then stops the gateway's own provider (not one the process registered). */
  stop(): Promise<void>;
}

export async function startTracing(config: NonNullable<Config['tracing']>, log: Logger): Promise<Tracing> {
  const contextManager = new AsyncLocalStorageContextManager();
  const ownContext = context.setGlobalContextManager(contextManager); // false: the process has one
  if (ownContext) contextManager.enable();
  const ownPropagator = propagation.setGlobalPropagator(new W3CTraceContextPropagator()); // false: the process has one
  const Exporter = config.protocol === 'http/json' ? JsonExporter : ProtobufExporter;
  const own = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new Exporter({ url: config.url, headers: config.headers }) })],
  });
  const registered = trace.setGlobalTracerProvider(own);
  if (!registered) await own.shutdown();
  const provider = trace.getTracerProvider();
  await traceRedisCommands(provider);
  log.info(
    registered
      ? { url: config.url, protocol: config.protocol, serviceName: config.serviceName }
      : { provider: 'registered by the process' },
    'tracing on',
  );
  return {
    provider,
    async stop() {
      if (ownContext) context.disable();
      if (ownPropagator) propagation.disable();
      if (!registered) return;
      await own.shutdown();
      trace.disable();
    },
  };
}
