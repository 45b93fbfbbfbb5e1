#!/usr/bin/env python3
"""Mends the gpu_lidar of ignition-rendering6's ogre (OGRE 1.x) engine on OGRE 1.12.

    gazebo-gpu-rays.py MEDIA     MEDIA: ignition-rendering6's ogre/media folder

The engine's lidar (OgreGpuRays) renders two passes whose vertex shaders
take their matrices from OpenGL's fixed-function state (ftransform(),
gl_ModelViewMatrix). OGRE 1.9, which the engine was written for, loaded the
object's world transform into that state; OGRE 1.12 (Debian 12's) does not
while a shader is bound. So every object was drawn at the origin (the first
pass: a unit box 2 m away measured 0.5 m), and the second pass, which
gathers one pixel per ray through an orthographic camera, put all its
points on one pixel: Gazebo's /scan was 0 (no point drawn) but for one beam.

This rewrites the two vertex shaders to take OGRE's automatic parameters
instead: the first pass the object's world-view(-projection) matrices, which
the engine already updates per object; the second pass the viewport size,
from which it places ray (i, j) on pixel (i, j) itself. The material gets
the matching param_named_auto lines. Checked against a box at a known
distance: every beam within 1 mm (the engine's last beam repeats the one
before it, as upstream). Idempotent: a patched folder is left as it is.
"""
import os
import sys

MARK = 'fsmnodes gazebo-gpu-rays.py'

FIRST_VS = f"""// Rewritten by {MARK}: the matrices come from OGRE's automatic
// parameters (see the material), not the fixed-function state.
uniform mat4 worldViewProj;
uniform mat4 worldView;

varying vec4 point;

void main()
{{
  gl_Position = worldViewProj * gl_Vertex;
  // the vertex in the camera's frame: its distance is the range
  point = worldView * gl_Vertex;
}}
"""

SECOND_VS = f"""// Rewritten by {MARK}: the canvas vertex of ray i in row j is
// (texture / 1000, -0.1 i, 0.1 (rows - j)); it is drawn on pixel (i, j) of
// the second-pass target without the orthographic camera's matrices.
uniform vec4 vpSize; // width, height, 1/width, 1/height of the target

varying float tex;

void main()
{{
  float i = floor(-gl_Vertex.y * 10.0 + 0.5);
  float j = floor(vpSize.y - gl_Vertex.z * 10.0 + 0.5);
  gl_Position = vec4((2.0 * i + 1.0) * vpSize.z - 1.0,
                     (2.0 * j + 1.0) * vpSize.w - 1.0, 0.0, 1.0);
  tex = gl_Vertex.x;
  gl_TexCoord[0] = gl_MultiTexCoord0;
}}
"""

# (program name, its source line, the parameters to add)
PARAMS = [
    ('GpuRaysScan1stVS', 'gpu_rays_1st_pass_vs.glsl',
     ['param_named_auto worldViewProj worldviewproj_matrix',
      'param_named_auto worldView worldview_matrix']),
    ('GpuRaysScan2ndVS', 'gpu_rays_2nd_pass_vs.glsl',
     ['param_named_auto vpSize viewport_size']),
]


def patch_material(text):
    """Adds a default_params block to each vertex program that lacks one."""
    for program, source, params in PARAMS:
        head = f'vertex_program {program} glsl\n{{\n  source {source}\n'
        start = text.find(head)
        if start < 0:
            raise ValueError(f'vertex_program {program} with source {source} not found')
        end = text.index('}', start + len(head))
        if 'default_params' in text[start:end]:
            continue
        block = '\n  default_params\n  {\n' + ''.join(f'    {p}\n' for p in params) + '  }\n'
        text = text[:start + len(head)] + block + text[start + len(head):]
    return text


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    media = os.path.join(sys.argv[1], 'materials')
    programs = os.path.join(media, 'programs')
    material = os.path.join(media, 'scripts', 'gpu_rays.material')
    if not os.path.isfile(material):
        sys.exit(f'gazebo-gpu-rays.py: {material} not found')
    for name, text in (('gpu_rays_1st_pass_vs.glsl', FIRST_VS), ('gpu_rays_2nd_pass_vs.glsl', SECOND_VS)):
        path = os.path.join(programs, name)
        if not os.path.isfile(path):
            sys.exit(f'gazebo-gpu-rays.py: {path} not found')
        with open(path, 'w') as f:
            f.write(text)
    with open(material) as f:
        text = f.read()
    patched = patch_material(text)
    if patched != text:
        with open(material, 'w') as f:
            f.write(patched)


if __name__ == '__main__':
    main()
