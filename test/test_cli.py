# Copyright 2026 gjk_ros maintainers
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""The ``gjk-ros`` command line: help, ``check`` on URDFs and meshes, ``warmup``, ``bench``."""

import pathlib
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

from gjk_ros.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE, main
from gjk_ros.core import warmup
import pytest
import trimesh

DEMO_URDF = pathlib.Path(__file__).resolve().parent.parent / 'gjk_ros' / 'resources' / \
    'demo_arm.urdf'


def _write_box_stl(path, extents=(0.1, 0.2, 0.3)):
    trimesh.creation.box(extents=extents).export(str(path))
    return path


def _write_l_shape_stl(path):
    # Two boxes side by side and one on top of the first: an L, which is not convex.
    foot = trimesh.creation.box(extents=(0.2, 0.1, 0.1))
    leg = trimesh.creation.box(extents=(0.1, 0.1, 0.2))
    leg.apply_translation((-0.05, 0.0, 0.15))
    trimesh.util.concatenate([foot, leg]).export(str(path))
    return path


def _urdf(link_body):
    return f'<robot name="probe"><link name="base"/><link name="part">{link_body}</link></robot>'


def test_help_lists_the_subcommands(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(['--help'])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for command in ('demo', 'check', 'warmup', 'bench'):
        assert command in text


def _warmed_groups(out):
    """Return the group names a warm-up report lists, in order."""
    listed = re.search(r'ready in [\d.]+ s \((.*)\); cache: ', out).group(1)
    return [re.sub(r' [\d.]+ s$', '', item) for item in listed.split(', ')]


def test_warmup_compiles_the_node_kernels_and_says_how_long(capsys):
    assert main(['warmup', '--jobs', '1']) == EXIT_OK
    out = capsys.readouterr().out
    assert _warmed_groups(out) == list(warmup.NODE_GROUPS) + ['mesh checks']
    assert f'cache: {warmup.cache_directory()}' in out


def test_warmup_all_in_two_processes(capsys):
    assert main(['warmup', '--all', '--jobs', '2']) == EXIT_OK
    assert _warmed_groups(capsys.readouterr().out) == list(warmup.GROUPS) + ['mesh checks']


def test_warmup_of_chosen_groups(capsys):
    assert main(['warmup', '--group', 'planning', '--group', 'signed_distance']) == EXIT_OK
    assert _warmed_groups(capsys.readouterr().out) == ['planning', 'signed_distance',
                                                       'mesh checks']


def test_warmup_help_names_every_group(capsys):
    with pytest.raises(SystemExit):
        main(['warmup', '--help'])
    names = re.search(r'\(repeatable\): (.*)', ' '.join(capsys.readouterr().out.split()))
    listed = re.split(r', | or ', names.group(1).rstrip())
    assert listed == list(warmup.GROUPS)


def test_warmup_rejects_an_unknown_group(capsys):
    assert main(['warmup', '--group', 'planner']) == EXIT_USAGE
    assert 'unknown group planner; the groups are pairset, points' in capsys.readouterr().err


@pytest.mark.parametrize('jobs', ['0', '-2', 'two'])
def test_warmup_jobs_must_be_a_positive_count(jobs, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(['warmup', '--jobs', jobs])
    assert exit_info.value.code == EXIT_USAGE
    assert 'argument --jobs' in capsys.readouterr().err


def test_module_entry_point_prints_help():
    result = subprocess.run([sys.executable, '-m', 'gjk_ros.cli', 'check', '--help'],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert 'URDF' in result.stdout


@pytest.mark.parametrize('argv', [[], ['frobnicate'], ['check']])
def test_usage_errors_exit_with_code_2(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert 'usage:' in capsys.readouterr().err


def test_check_demo_urdf_lists_every_link_with_its_pieces(capsys):
    assert main(['check', str(DEMO_URDF)]) == EXIT_OK
    out = capsys.readouterr().out
    robot = ElementTree.parse(DEMO_URDF).getroot()
    for link in robot.iter('link'):
        count = len(link.findall('collision'))
        if count:
            assert f"  {link.get('name')}: {count} piece" in out
        else:
            assert link.get('name') in out.split('links without collision geometry:')[1]
    cylinders = [g for g in _collision_geometries(robot) if g.tag == 'cylinder']
    assert out.count('exact cylinder') == len(cylinders)


def _collision_geometries(robot):
    return [geometry for collision in robot.iter('collision')
            for geometry in collision.find('geometry')]


def test_check_box_mesh_is_convex_with_eight_vertices(tmp_path, capsys):
    path = _write_box_stl(tmp_path / 'box.stl')
    assert main(['check', str(path)]) == EXIT_OK
    out = capsys.readouterr().out
    assert 'box.stl: convex, 8 distinct vertices' in out
    assert 'convex hull of 8 vertices' in out


def test_check_non_convex_mesh_warns_and_succeeds(tmp_path, capsys):
    path = _write_l_shape_stl(tmp_path / 'l_shape.stl')
    assert main(['check', str(path)]) == EXIT_OK
    assert 'not convex' in capsys.readouterr().out


def test_check_urdf_mesh_resolved_relative_to_the_urdf(tmp_path, capsys, monkeypatch):
    _write_box_stl(tmp_path / 'part.stl')
    urdf = tmp_path / 'robot.urdf'
    urdf.write_text(_urdf('<collision><geometry><mesh filename="part.stl"/></geometry>'
                          '</collision>'))
    monkeypatch.chdir(tmp_path.parent)  # the working directory must not matter
    assert main(['check', str(urdf)]) == EXIT_OK
    out = capsys.readouterr().out
    assert 'part: 1 piece' in out
    assert 'convex hull of 8 vertices' in out


def test_check_package_uri_with_package_path(tmp_path, capsys):
    share = tmp_path / 'share'
    (share / 'meshes').mkdir(parents=True)
    _write_box_stl(share / 'meshes' / 'part.stl')
    urdf = tmp_path / 'robot.urdf'
    urdf.write_text(_urdf('<collision><geometry><mesh filename="package://probe_pkg/meshes/'
                          'part.stl" scale="2 2 2"/></geometry></collision>'))
    assert main(['check', str(urdf), '--package-path', f'probe_pkg={share}']) == EXIT_OK
    assert 'part: 1 piece' in capsys.readouterr().out


def test_check_missing_mesh_names_the_link_and_fails(tmp_path, capsys):
    urdf = tmp_path / 'robot.urdf'
    urdf.write_text(_urdf('<collision><geometry><mesh filename="absent.stl"/></geometry>'
                          '</collision>'))
    assert main(['check', str(urdf)]) == EXIT_FAILED
    err = capsys.readouterr().err
    assert err.startswith('error: part:')
    assert 'absent.stl' in err


def test_check_malformed_urdf_fails(tmp_path, capsys):
    urdf = tmp_path / 'broken.urdf'
    urdf.write_text('<robot name="broken"><link name="a">')
    assert main(['check', str(urdf)]) == EXIT_FAILED
    assert 'malformed XML' in capsys.readouterr().err


def test_check_bad_primitive_fails_but_reports_other_links(tmp_path, capsys):
    urdf = tmp_path / 'robot.urdf'
    urdf.write_text('<robot name="mixed">'
                    '<link name="good"><collision><geometry><sphere radius="0.1"/></geometry>'
                    '</collision></link>'
                    '<link name="bad"><collision><geometry><box size="0.1 -1 0.1"/></geometry>'
                    '</collision></link></robot>')
    assert main(['check', str(urdf)]) == EXIT_FAILED
    captured = capsys.readouterr()
    assert 'good: 1 piece' in captured.out
    assert 'error: bad:' in captured.err


@pytest.mark.parametrize('name, content', [('empty.stl', b''), ('notes.txt', b'hello')])
def test_check_unloadable_mesh_fails(tmp_path, capsys, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    assert main(['check', str(path)]) == EXIT_FAILED
    assert capsys.readouterr().err.startswith('error: ')


def test_check_missing_file_fails(tmp_path, capsys):
    assert main(['check', str(tmp_path / 'nowhere.stl')]) == EXIT_FAILED
    assert 'nowhere.stl' in capsys.readouterr().err


def test_check_rejects_malformed_package_path(capsys):
    assert main(['check', str(DEMO_URDF), '--package-path', 'no_equals_sign']) == 2
    assert 'PKG=DIR' in capsys.readouterr().err


def test_bench_forwards_arguments_and_exit_code(tmp_path, monkeypatch):
    # A stand-in bench/run.py in the working directory, which `gjk-ros bench` looks at first.
    (tmp_path / 'bench').mkdir()
    (tmp_path / 'bench' / '__init__.py').write_text('')
    (tmp_path / 'bench' / 'run.py').write_text(
        'import pathlib, sys\n'
        "pathlib.Path('argv.txt').write_text(' '.join(sys.argv[1:]))\n"
        'sys.exit(3)\n')
    monkeypatch.chdir(tmp_path)
    assert main(['bench', '--quick', '--help']) == 3
    assert (tmp_path / 'argv.txt').read_text() == '--quick --help'
