from glob import glob
import os

from setuptools import find_packages, setup

package_name = 'gjk_ros'

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test', 'test.*', 'bench', 'bench.*']),
    package_data={package_name: ['resources/*.urdf']},
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        (os.path.join('share', package_name, 'launch'), glob('launch/*.launch.py')),
        (os.path.join('share', package_name, 'config'),
         glob('config/*.yaml') + glob('config/*.rviz')),
    ],
    install_requires=['setuptools', 'numpy', 'scipy', 'trimesh', 'numba'],
    zip_safe=True,
    maintainer='gjk_ros maintainers',
    maintainer_email='maintainers@gjk-ros.invalid',
    description='Tracked GJK distances and exact MTD between robot links and obstacles.',
    license='Apache-2.0',
    extras_require={'test': ['pytest<9', 'hypothesis'], 'decomposition': ['coacd']},
    entry_points={
        'console_scripts': [
            'gjk_distance_node = gjk_ros.ros.entry:main',
            'gjk_aggregator = gjk_ros.ros.shards.aggregator:main',
            'scene_publisher = gjk_ros.ros.entry:scene_publisher_main',
            'gjk-ros = gjk_ros.cli:main',
        ],
    },
)
