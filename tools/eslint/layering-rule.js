import { statSync } from 'node:fs';
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
 * Sub-layers: a layer may list its immediate sub-folders in `folders`, lowest first, a strict
 * total order. Within the layer, a file in folder i may import its own folder and the folders
 * before it (index < i), never one after it, so no two folders can import each other and no
 * cycle of folders can be written. Files directly in the layer's root (src-shared/errors.ts) are
 * the lowest tier: every folder may import them, and they import only each other. With `folders`
 * given, every sub-folder must be listed: a file in an unlisted folder, or an import into one, is
 * an error, so a new folder has to be placed in the order. Deeper folders belong to their
 * top-level folder (src-shared/a/b/c.ts is in `a`); imports inside one folder are not checked.
 *
 * Options: [{ layers: [{ path, mayImport: [layer paths or single files], packages: [names],
 * folders?: [sub-folder names, lowest first] }] }], paths relative to the repository root. A file
 * outside every layer (tests, tools, configs) is not checked.
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

const ROOT_TIER = '(root files)';

/**
 * The sub-layer of a path inside `layer`: its top-level folder's name, or ROOT_TIER for a file
 * directly in the layer's root. A one-segment path names a folder when it is one (`../corruptions`
 * resolves to its index) or when the order lists that name.
 */
function folderOf(absolutePath, layer) {
  const inside = relative(resolve(ROOT, layer.path), absolutePath).split(sep);
  if (inside.length > 1) return inside[0];
  if (inside[0] === '' || !(layer.folders.includes(inside[0]) || isDirectory(absolutePath))) return ROOT_TIER;
  return inside[0];
}

function isDirectory(absolutePath) {
  try {
    return statSync(absolutePath).isDirectory();
  } catch {
    return false;
  }
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
                folders: { type: 'array', items: { type: 'string' }, uniqueItems: true },
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
      folder:
        "{{from}} may not import {{target}} (resolved from '{{specifier}}'): in {{layer}} a folder imports only the folders before it ({{order}}, lowest first).",
      unplaced:
        '{{folder}} is not in the folder order of {{layer}} ({{order}}, lowest first): place it in `folders` in eslint.config.js.',
    },
  },
  create(context) {
    const { layers } = context.options[0];
    const own = layerOf(context.filename, layers);
    if (own === null) return {};
    const order = own.folders ? [ROOT_TIER, ...own.folders] : null;
    const ownFolder = order && folderOf(context.filename, own);
    const shownOrder = order && order.join(' < ');
    const named = (folder) => (folder === ROOT_TIER ? `${own.path} ${ROOT_TIER}` : `${own.path}/${folder}`);

    /** The sub-layer rule for an import that lands in the importing file's own layer. */
    function checkFolder(node, specifier, target) {
      const targetFolder = folderOf(target, own);
      if (targetFolder === ownFolder || !order.includes(ownFolder)) return;
      if (!order.includes(targetFolder)) {
        context.report({
          node,
          messageId: 'unplaced',
          data: { folder: named(targetFolder), layer: own.path, order: shownOrder },
        });
      } else if (order.indexOf(targetFolder) > order.indexOf(ownFolder)) {
        context.report({
          node,
          messageId: 'folder',
          data: {
            from: named(ownFolder),
            target: named(targetFolder),
            specifier,
            layer: own.path,
            order: shownOrder,
          },
        });
      }
    }

    function check(node, specifier) {
      if (typeof specifier !== 'string') return;
      if (specifier.startsWith('.') || isAbsolute(specifier)) {
        const target = resolve(dirname(context.filename), specifier);
        const targetLayer = layerOf(target, layers);
        if (targetLayer === null) {
          const shown = relative(ROOT, target).split(sep).join('/');
          if (own.mayImport.includes(shown)) return;
          context.report({ node, messageId: 'outside', data: { from: own.path, specifier, target: shown } });
        } else if (targetLayer === own) {
          if (order) checkFolder(node, specifier, target);
        } else if (!own.mayImport.includes(targetLayer.path)) {
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
      Program: (node) => {
        if (order && !order.includes(ownFolder))
          context.report({
            node,
            messageId: 'unplaced',
            data: { folder: named(ownFolder), layer: own.path, order: shownOrder },
          });
      },
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
