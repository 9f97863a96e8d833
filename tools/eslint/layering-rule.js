import { builtinModules } from 'node:module';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';

/**
 * The layer rule of docs/ARCHITECTURE.md, checked on resolved paths (as VS Code's code-layering
 * rule does) rather than on import text: every relative import is resolved against the importing
 * file and the target's layer is read from where it lands, so `../../../src-main/host/web-host`
 * is caught from src-main/core however it is spelled. Bare specifiers are checked against the
 * packages the layer may use (Node built-ins count as the package `node:*`). Type-only imports
 * count too: a type from a higher layer still couples the layers.
 *
 * Options: [{ layers: [{ path, mayImport: [layer paths or single files], packages: [names] }] }],
 * paths relative to the repository root. A file outside every layer (tests, tools, configs) is not checked.
 */
const ROOT = resolve(import.meta.dirname, '..', '..');
const NODE_BUILTINS = new Set(builtinModules);

function layerOf(absolutePath, layers) {
  const fromRoot = relative(ROOT, absolutePath);
  if (fromRoot.startsWith('..') || isAbsolute(fromRoot)) return null;
  const posix = fromRoot.split(sep).join('/');
  let best = null;
  for (const layer of layers) {
    if (
      (posix === layer.path || posix.startsWith(`${layer.path}/`)) &&
      (best === null || layer.path.length > best.path.length)
    )
      best = layer;
  }
  return best;
}

function packageName(specifier) {
  if (specifier.startsWith('node:') || NODE_BUILTINS.has(specifier.split('/')[0])) return 'node:*';
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

export const layeringRule = {
  meta: {
    type: 'problem',
    docs: { description: 'Imports only point downwards through the layers, and each layer uses only its packages.' },
    schema: [
      {
        type: 'object',
        properties: {
          layers: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                path: { type: 'string' },
                mayImport: { type: 'array', items: { type: 'string' } },
                packages: { type: 'array', items: { type: 'string' } },
              },
              required: ['path', 'mayImport', 'packages'],
              additionalProperties: false,
            },
          },
        },
        required: ['layers'],
        additionalProperties: false,
      },
    ],
    messages: {
      layer: "{{from}} may not import {{target}} (resolved from '{{specifier}}'); it may import {{allowed}}.",
      outside: "{{from}} may not import '{{specifier}}', which resolves outside every layer ({{target}}).",
      package: "{{from}} may not use the package '{{name}}'; its packages: {{allowed}}.",
    },
  },
  create(context) {
    const { layers } = context.options[0];
    const own = layerOf(context.filename, layers);
    if (own === null) return {};

    function check(node, specifier) {
      if (typeof specifier !== 'string') return;
      if (specifier.startsWith('.') || isAbsolute(specifier)) {
        const target = resolve(dirname(context.filename), specifier);
        const targetLayer = layerOf(target, layers);
        if (targetLayer === null) {
          const shown = relative(ROOT, target).split(sep).join('/');
          if (own.mayImport.includes(shown)) return;
          context.report({ node, messageId: 'outside', data: { from: own.path, specifier, target: shown } });
        } else if (targetLayer !== own && !own.mayImport.includes(targetLayer.path)) {
          const allowed = [own.path, ...own.mayImport].join(', ');
          context.report({
            node,
            messageId: 'layer',
            data: { from: own.path, target: targetLayer.path, specifier, allowed },
          });
        }
        return;
      }
      const name = packageName(specifier);
      if (!own.packages.includes(name)) {
        const allowed = own.packages.length === 0 ? 'none' : own.packages.join(', ');
        context.report({ node, messageId: 'package', data: { from: own.path, name, allowed } });
      }
    }

    return {
      ImportDeclaration: (node) => check(node.source, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node.source, node.source.value),
      ExportAllDeclaration: (node) => check(node.source, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node.source, node.source.value),
      CallExpression: (node) => {
        const [argument] = node.arguments;
        if (node.callee.type === 'Identifier' && node.callee.name === 'require' && argument?.type === 'Literal')
          check(argument, argument.value);
      },
    };
  },
};
